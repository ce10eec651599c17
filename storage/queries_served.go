package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// HostnamesWithRows is HostnamesByID, Records and Challenges of the same
// ids: what a node serves for them. On PostgreSQL the three reads go in
// one round trip (one simple query holds them): the change feed asks for
// them on every commit it applies, so each round trip it saves is one a
// name waits for before DNS answers it, on every node.
func (q Queries) HostnamesWithRows(ctx context.Context, ids []string) ([]Hostname, []Record, []Challenge, error) {
	hs, rs, cs := []Hostname{}, []Record{}, []Challenge{}
	if len(ids) == 0 {
		return hs, rs, cs, nil
	}
	reads := []*bun.SelectQuery{q.hostnamesByID(&hs, ids), q.records(&rs, ids), q.challenges(&cs, ids)}
	if q.dialect != Postgres {
		for _, r := range reads {
			if err := r.Scan(ctx); err != nil {
				return nil, nil, nil, mapErr(err)
			}
		}
		return hs, rs, cs, nil
	}
	text := make([]string, len(reads))
	for i, r := range reads {
		text[i] = r.String()
	}
	rows, err := q.db.QueryContext(ctx, strings.Join(text, "; "))
	if err != nil {
		return nil, nil, nil, mapErr(err)
	}
	defer rows.Close()
	db := q.db.NewSelect().DB()
	scan := func(next func() any) error {
		for rows.Next() { // until it says no once: then the next result set
			if err := db.ScanRow(ctx, rows, next()); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	sets := []func() any{
		func() any { hs = append(hs, Hostname{}); return &hs[len(hs)-1] },
		func() any { rs = append(rs, Record{}); return &rs[len(rs)-1] },
		func() any { cs = append(cs, Challenge{}); return &cs[len(cs)-1] },
	}
	for i, next := range sets {
		if i > 0 && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return nil, nil, nil, mapErr(err)
			}
			return nil, nil, nil, fmt.Errorf("storage: read %d of %d returned no result", i+1, len(sets))
		}
		if err := scan(next); err != nil {
			return nil, nil, nil, mapErr(err)
		}
	}
	return hs, rs, cs, mapErr(rows.Close())
}
