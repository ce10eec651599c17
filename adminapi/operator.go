package adminapi

import (
	"net/http"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/hostnames"
)

// The operators' look-ups and the close of an account: the rules are in
// accounts and hostnames, which the dashboard's operator pages call too.

type accountListView struct {
	Accounts   []accountView `json:"accounts"`
	NextCursor *string       `json:"next_cursor"`
}

func (s *Server) listAccounts(c *call) (int, any, error) {
	q := c.r.URL.Query()
	limit, err := intParam(c.r, "limit", defaultLimit)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.accounts.Page(c.r.Context(), accounts.PageQuery{Name: q.Get("name"), Status: q.Get("status"),
		Cursor: q.Get("cursor"), Limit: min(max(limit, 1), maxLimit)})
	if err != nil {
		return 0, nil, err
	}
	out := accountListView{Accounts: make([]accountView, len(page.Accounts)), NextCursor: cursorView(page.Next)}
	for i := range page.Accounts {
		out.Accounts[i] = s.accountView(&page.Accounts[i])
	}
	return http.StatusOK, out, nil
}

// ownedHostnameView is a hostname as the operator sees it: with its owner.
type ownedHostnameView struct {
	hostnameView
	AccountID string `json:"account_id"`
}

type ownedHostnameListView struct {
	Hostnames  []ownedHostnameView `json:"hostnames"`
	NextCursor *string             `json:"next_cursor"`
}

func (s *Server) findHostnames(c *call) (int, any, error) {
	q := c.r.URL.Query()
	limit, err := intParam(c.r, "limit", defaultLimit)
	if err != nil {
		return 0, nil, err
	}
	found, err := s.hostnames.Find(c.r.Context(), hostnames.Lookup{Hostname: q.Get("hostname"), IP: q.Get("ip"),
		AccountID: q.Get("account_id"), Cursor: q.Get("cursor"), Limit: min(max(limit, 1), maxLimit)})
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	out := ownedHostnameListView{Hostnames: make([]ownedHostnameView, len(found.Hostnames)), NextCursor: cursorView(found.Next)}
	for i := range found.Hostnames {
		h := &found.Hostnames[i]
		out.Hostnames[i] = ownedHostnameView{hostnameView: s.hostnameView(h, now), AccountID: h.AccountID}
	}
	return http.StatusOK, out, nil
}

func (s *Server) closeAccount(c *call) (int, any, error) {
	_, closed, err := s.accounts.Close(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, closed, nil
}

// cursorView is a next cursor as a page answers it: null on the last page.
func cursorView(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
