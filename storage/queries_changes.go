package storage

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/uptrace/bun"
)

// LastChange is the id of the newest change row (0 for none).
func (q Queries) LastChange(ctx context.Context) (int64, error) {
	var id int64
	err := q.db.NewSelect().Model((*Change)(nil)).ColumnExpr("COALESCE(MAX(id), 0)").Scan(ctx, &id)
	return id, mapErr(err)
}

// NewestChange is the newest change row: its id and when it was written
// (zeros for none). Compaction keeps it always.
func (q Queries) NewestChange(ctx context.Context) (Change, error) {
	var c Change
	err := q.db.NewSelect().Model(&c).OrderExpr("id DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Change{}, nil
	}
	return c, mapErr(err)
}

// ChangesAfter returns up to limit changes with id > after, plus the changes
// with the ids in also (gaps seen earlier), in id order. The two are
// statements apart (in one round trip on PostgreSQL): "id > ? OR id IN
// (...)" is answered by scanning the whole table, each part alone by the
// primary key.
func (q Queries) ChangesAfter(ctx context.Context, after int64, also []int64, limit int) ([]Change, error) {
	cs, _, err := q.ChangesServed(ctx, after, also, limit, nil)
	return cs, err
}

// changesAfter reads up to limit changes with id > after, in id order.
func (q Queries) changesAfter(cs *[]Change, after int64, limit int) *bun.SelectQuery {
	return q.db.NewSelect().Model(cs).Where("id > ?", after).OrderExpr("id").Limit(int64(limit))
}

// changesIn reads the changes with the ids.
func (q Queries) changesIn(cs *[]Change, ids []int64) *bun.SelectQuery {
	return q.db.NewSelect().Model(cs).Where("id IN (?)", bun.In(ids))
}

// mergeGaps puts the gaps read (every one below the changes after) among
// the changes, in id order.
func mergeGaps(cs, gaps []Change) []Change {
	if len(gaps) == 0 {
		return cs
	}
	cs = append(gaps, cs...)
	slices.SortFunc(cs, func(a, b Change) int { return cmp.Compare(a.ID, b.ID) })
	return cs
}
