package accounts

import (
	"context"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// PageQuery asks for a page of accounts, newest first: Name exact, Status
// one of storage.AccountStates; Cursor is the previous page's next cursor.
type PageQuery struct {
	Name, Status, Cursor string
	Limit                int
}

// Page is a page of accounts and the next page's cursor ("" on the last).
type Page struct {
	Accounts []storage.Account
	Next     string
}

// Page answers the operator's account list (the admin API and the
// dashboard both ask here).
func (s *Service) Page(ctx context.Context, q PageQuery) (*Page, error) {
	aq := storage.AccountQuery{Name: q.Name, Status: q.Status, Now: s.now().UnixMilli(), Limit: q.Limit}
	if q.Status != "" && !slices.Contains(storage.AccountStates, q.Status) {
		return nil, apierror.BadRequest("status must be one of %s", strings.Join(storage.AccountStates, ", "))
	}
	var err error
	if aq.After, err = storage.ParseCursor(q.Cursor); err != nil {
		return nil, apierror.BadCursor()
	}
	as, next, err := s.store.Reader().ListAccounts(ctx, aq)
	if err != nil {
		return nil, err
	}
	return &Page{Accounts: as, Next: next.String()}, nil
}

// Names are the names of the accounts ids, by id (unknown ones left out).
func (s *Service) Names(ctx context.Context, ids []string) (map[string]string, error) {
	return s.store.Reader().AccountNames(ctx, ids)
}
