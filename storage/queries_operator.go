package storage

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// The operators' look-ups (GET /api/admin/accounts and /api/admin/hostnames):
// newest first, paged by a cursor on (created_at, id) so that a page costs
// its own rows through an index however many come before it.

// Cursor is where a page starts: after the row with this creation time and
// id. The zero Cursor is the first page.
type Cursor struct {
	CreatedAt int64
	ID        string
}

// ErrBadCursor is a cursor that no page handed out.
var ErrBadCursor = errors.New("storage: bad cursor")

// String is the cursor as an answer hands it out: opaque, URL-safe.
func (c Cursor) String() string {
	if c.ID == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt, 10) + "." + c.ID))
}

// ParseCursor reads what Cursor.String wrote; "" is the first page.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	at, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{CreatedAt: n, ID: id}, nil
}

// after keeps the rows older than c in a newest-first order.
func (c Cursor) after(sel *bun.SelectQuery) *bun.SelectQuery {
	if c.ID == "" {
		return sel
	}
	// A row value, which both stores take as the index's range (an OR of
	// the two columns is only a filter on PostgreSQL: a deep page would
	// read every row before it).
	return sel.Where("(created_at, id) < (?, ?)", c.CreatedAt, c.ID)
}

// AccountQuery selects accounts: Name exact, Status one of the Account*
// states at Now (Unix ms); empty fields select all.
type AccountQuery struct {
	Name, Status string
	Now          int64
	After        Cursor
	Limit        int
}

// statusWhere is Account.Access in SQL, for one state.
var statusWhere = map[string]string{
	AccountClosed:    "closed_at > 0",
	AccountSuspended: "closed_at = 0 AND suspended_at > 0",
	AccountEnded:     "closed_at = 0 AND suspended_at = 0 AND plan_ends_at > 0 AND plan_ends_at <= ?",
	AccountActive:    "closed_at = 0 AND suspended_at = 0 AND (plan_ends_at = 0 OR plan_ends_at > ?)",
}

// AccountStates are the states an AccountQuery may ask for.
var AccountStates = []string{AccountActive, AccountSuspended, AccountEnded, AccountClosed}

// ListAccounts is a page of the accounts q selects, newest first, and the
// cursor of the next page (zero when this is the last).
func (q Queries) ListAccounts(ctx context.Context, aq AccountQuery) ([]Account, Cursor, error) {
	as := []Account{}
	sel := q.db.NewSelect().Model(&as)
	if aq.Name != "" {
		sel = sel.Where("name = ?", aq.Name)
	}
	if aq.Status != "" {
		w, ok := statusWhere[aq.Status]
		if !ok {
			return nil, Cursor{}, errors.New("storage: unknown account status " + aq.Status)
		}
		if strings.Contains(w, "?") {
			sel = sel.Where(w, aq.Now)
		} else {
			sel = sel.Where(w)
		}
	}
	sel = aq.After.after(sel)
	if err := newestFirst(sel, aq.Limit).Scan(ctx); err != nil {
		return nil, Cursor{}, mapErr(err)
	}
	as, next := pageOf(as, aq.Limit, func(a Account) Cursor { return Cursor{a.CreatedAt, a.ID} })
	return as, next, nil
}

// newestFirst orders a page and reads one row past it, which tells
// whether another page follows.
func newestFirst(sel *bun.SelectQuery, limit int) *bun.SelectQuery {
	return sel.OrderExpr("created_at DESC, id DESC").Limit(int64(max(limit, 1) + 1))
}

// pageOf cuts the row newestFirst read past the page, and makes the next
// page's cursor from the page's last row (zero when no row was past it).
func pageOf[T any](rows []T, limit int, key func(T) Cursor) ([]T, Cursor) {
	if len(rows) <= max(limit, 1) {
		return rows, Cursor{}
	}
	rows = rows[:len(rows)-1]
	return rows, key(rows[len(rows)-1])
}

// HostnameQuery selects hostnames of every status, released ones
// included (the abuse desk asks who held a name): by exact name, by an
// address DNS serves (canonical text), or by account. One of the three.
type HostnameQuery struct {
	Name, Addr, AccountID string
	After                 Cursor
	Limit                 int
}

// FindHostnamesFor is a page of the hostnames hq selects, newest first, and
// the cursor of the next page.
func (q Queries) FindHostnamesFor(ctx context.Context, hq HostnameQuery) ([]Hostname, Cursor, error) {
	hs := []Hostname{}
	sel := q.db.NewSelect().Model(&hs)
	switch {
	case hq.Name != "":
		sel = sel.Where("name = ?", hq.Name)
	case hq.Addr != "":
		// addrs starts with ip. Three indexed reads (migration 27): the
		// first address, the second (what follows the first), and any
		// address of the few hostnames with more than two. A union, not
		// an OR: SQLite reads the whole table for an OR of unlike terms.
		sel = sel.Where("id IN (SELECT id FROM hostnames WHERE ip = ? UNION ALL "+
			"SELECT id FROM hostnames WHERE substr(addrs, length(ip) + 2) = ? UNION ALL "+
			"SELECT id FROM hostnames WHERE addrs LIKE '%,%,%' AND ',' || addrs || ',' LIKE ?)", hq.Addr, hq.Addr, "%,"+hq.Addr+",%")
	case hq.AccountID != "":
		sel = sel.Where("account_id = ?", hq.AccountID)
	default:
		return nil, Cursor{}, errors.New("storage: a hostname query needs a name, an address or an account")
	}
	sel = hq.After.after(sel)
	if err := newestFirst(sel, hq.Limit).Scan(ctx); err != nil {
		return nil, Cursor{}, mapErr(err)
	}
	hs, next := pageOf(hs, hq.Limit, func(h Hostname) Cursor { return Cursor{h.CreatedAt, h.ID} })
	return hs, next, nil
}
