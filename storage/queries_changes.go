package storage

import (
	"cmp"
	"context"
	"slices"

	"github.com/uptrace/bun"
)

// LastChange is the id of the newest change row (0 for none).
func (q Queries) LastChange(ctx context.Context) (int64, error) {
	var id int64
	err := q.db.NewSelect().Model((*Change)(nil)).ColumnExpr("COALESCE(MAX(id), 0)").Scan(ctx, &id)
	return id, mapErr(err)
}

// ChangesAfter returns up to limit changes with id > after, plus the changes
// with the ids in also (gaps seen earlier), in id order. The two are read
// apart: "id > ? OR id IN (...)" is answered by scanning the whole table,
// each part alone by the primary key.
func (q Queries) ChangesAfter(ctx context.Context, after int64, also []int64, limit int) ([]Change, error) {
	cs := []Change{}
	if err := q.db.NewSelect().Model(&cs).Where("id > ?", after).OrderExpr("id").Limit(int64(limit)).Scan(ctx); err != nil {
		return cs, mapErr(err)
	}
	if len(also) == 0 {
		return cs, nil
	}
	var gaps []Change
	if err := q.db.NewSelect().Model(&gaps).Where("id IN (?)", bun.In(also)).Scan(ctx); err != nil {
		return cs, mapErr(err)
	}
	cs = append(gaps, cs...) // every gap is below after
	slices.SortFunc(cs, func(a, b Change) int { return cmp.Compare(a.ID, b.ID) })
	return cs, nil
}
