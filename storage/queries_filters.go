package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// Filter selects an account's hostnames. Empty DomainIDs and HostnameIDs
// with Team false select nothing; Team selects every one.
type Filter struct {
	AccountID   string
	Team        bool
	DomainIDs   []string
	HostnameIDs []string
	Exclude     []string // statuses left out
}

func (f Filter) apply(sel *bun.SelectQuery) *bun.SelectQuery {
	sel = sel.Where("account_id = ?", f.AccountID)
	if len(f.Exclude) > 0 {
		sel = sel.Where("status NOT IN (?)", bun.In(f.Exclude))
	}
	if f.Team {
		return sel
	}
	return sel.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("1 = 0")
		if len(f.DomainIDs) > 0 {
			q = q.WhereOr("domain_id IN (?)", bun.In(f.DomainIDs))
		}
		if len(f.HostnameIDs) > 0 {
			q = q.WhereOr("id IN (?)", bun.In(f.HostnameIDs))
		}
		return q
	})
}

// FindHostnames lists the hostnames f selects, newest first (limit >= 1).
func (q Queries) FindHostnames(ctx context.Context, f Filter, limit, skip int) ([]Hostname, error) {
	hs := []Hostname{}
	sel := f.apply(q.db.NewSelect().Model(&hs)).
		OrderExpr("created_at DESC, id DESC").Limit(int64(max(limit, 1))).Offset(int64(max(skip, 0)))
	return hs, mapErr(sel.Scan(ctx))
}

// CountHostnames counts the hostnames f selects that have one of statuses
// (any status when none are given).
func (q Queries) CountHostnames(ctx context.Context, f Filter, statuses ...string) (int, error) {
	sel := f.apply(q.db.NewSelect().Model((*Hostname)(nil)))
	if len(statuses) > 0 {
		sel = sel.Where("status IN (?)", bun.In(statuses))
	}
	n, err := sel.Count(ctx)
	return int(n), mapErr(err)
}

// HostnamesWithStatus lists up to limit hostnames in a status, oldest change first.
func (q Queries) HostnamesWithStatus(ctx context.Context, status string, limit int) ([]Hostname, error) {
	hs := []Hostname{}
	err := q.db.NewSelect().Model(&hs).Where("status = ?", status).
		OrderExpr("updated_at").Limit(int64(limit)).Scan(ctx)
	return hs, mapErr(err)
}

// UpdateHostnameIf writes h only if the stored row still has the given
// updated_at (optimistic: another node may have changed it since it was
// read), and reports whether it did.
//
// Only the columns the background work owns are written (status, the
// addresses, the refresh time), so nothing else read stale is put back.
func (q Queries) UpdateHostnameIf(ctx context.Context, h *Hostname, updatedAt int64) (bool, error) {
	res, err := q.db.NewUpdate().Model(h).Column("status", "ip", "addrs", "refresh_at", "updated_at").
		WherePK().Where("updated_at = ?", updatedAt).Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
