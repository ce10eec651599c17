package storage

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// HostnamesWithRows is HostnamesByID, Records and Challenges of the same
// ids: what a node serves for them. On PostgreSQL the three reads go in
// one round trip (one simple query holds them): the change feed asks for
// them on every commit it applies, so each round trip it saves is one a
// name waits for before DNS answers it, on every node. Queries that
// ChangesServed gave answer for the ids it read with the changes without
// asking again.
func (q Queries) HostnamesWithRows(ctx context.Context, ids []string) ([]Hostname, []Record, []Challenge, error) {
	hs, rs, cs := []Hostname{}, []Record{}, []Challenge{}
	if len(ids) == 0 {
		return hs, rs, cs, nil
	}
	if q.served != nil && q.served.covers(ids) {
		return q.served.of(ids)
	}
	if err := q.readAll(ctx, q.servedReads(&hs, &rs, &cs, ids)); err != nil {
		return nil, nil, nil, err
	}
	return hs, rs, cs, nil
}

// Prepared on PostgreSQL: the change feed sends them on every commit it
// applies, on every node, and as text each was parsed and planned again on
// the way from a commit to serving it.
var (
	changesAfterStmt = newPGStatement("changes_after", func(db *bun.DB) string {
		return db.NewSelect().Model((*Change)(nil)).Where("id > $1").OrderExpr("id").Limit(0).String() + " LIMIT $2"
	})
	changesInStmt = newPGStatement("changes_in", func(db *bun.DB) string {
		return db.NewSelect().Model((*Change)(nil)).Where("id = ANY($1::bigint[])").String()
	})
	servedHostnames = newPGStatement("served_hostnames", func(db *bun.DB) string {
		return db.NewSelect().Model((*Hostname)(nil)).Where("id = ANY($1::text[])").String()
	})
	servedRecords = newPGStatement("served_records", func(db *bun.DB) string {
		return db.NewSelect().Model((*Record)(nil)).Where("hostname_id = ANY($1::text[])").OrderExpr(recordOrder).String()
	})
	servedChallenges = newPGStatement("served_challenges", func(db *bun.DB) string {
		return db.NewSelect().Model((*Challenge)(nil)).Where("hostname_id = ANY($1::text[])").OrderExpr(challengeOrder).String()
	})
)

// read is one read of readAll: the query, which scans into its model, and
// on PostgreSQL the prepared statement that reads the same rows, each put
// where set says.
type read struct {
	sel  *bun.SelectQuery
	stmt *pgStatement
	args []any
	set  func() any
}

// servedReads are HostnamesWithRows's reads of ids.
func (q Queries) servedReads(hs *[]Hostname, rs *[]Record, cs *[]Challenge, ids []string) []read {
	arg := []any{pgdialect.Array(ids)}
	return []read{
		{q.hostnamesByID(hs, ids), servedHostnames, arg, next(hs)},
		{q.records(rs, ids), servedRecords, arg, next(rs)},
		{q.challenges(cs, ids), servedChallenges, arg, next(cs)},
	}
}

// next gives each row of a result set its place at the end of s.
func next[T any](s *[]T) func() any {
	return func() any { *s = append(*s, *new(T)); return &(*s)[len(*s)-1] }
}

// ChangesServed is ChangesAfter, and HostnamesWithRows of ids read in the
// same round trip on PostgreSQL, after the changes: its Queries answer
// HostnamesWithRows for any of those ids from these rows, as fresh as a
// read of them after the changes would be. The change feed gives it the
// hostnames this node's own writes just changed: their changes are what
// it is about to read, and the rows their names are served from would
// take a round trip of their own.
func (q Queries) ChangesServed(ctx context.Context, after int64, also []int64, limit int, ids []string) ([]Change, Queries, error) {
	var (
		cs, gaps = []Change{}, []Change(nil)
		reads    = []read{{q.changesAfter(&cs, after, limit), changesAfterStmt, []any{after, limit}, next(&cs)}}
		sv       *served
	)
	if len(also) > 0 {
		reads = append(reads, read{q.changesIn(&gaps, also), changesInStmt, []any{pgdialect.Array(also)}, next(&gaps)})
	}
	if len(ids) > 0 && q.dialect == Postgres { // SQLite has no round trip to save
		sv = &served{ids: map[string]bool{}}
		reads = append(reads, q.servedReads(&sv.hs, &sv.rs, &sv.cs, ids)...)
	}
	if err := q.readAll(ctx, reads); err != nil {
		return cs, q, err
	}
	if sv != nil {
		for _, id := range ids {
			sv.ids[id] = true
		}
		q.served = sv
	}
	return mergeGaps(cs, gaps), q, nil
}

// served are the rows ChangesServed read for its ids.
type served struct {
	ids map[string]bool
	hs  []Hostname
	rs  []Record
	cs  []Challenge
}

func (s *served) covers(ids []string) bool {
	for _, id := range ids {
		if !s.ids[id] {
			return false
		}
	}
	return true
}

// of is HostnamesWithRows's answer for ids, in the same order.
func (s *served) of(ids []string) ([]Hostname, []Record, []Challenge, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	hs, rs, cs := []Hostname{}, []Record{}, []Challenge{}
	for _, h := range s.hs {
		if want[h.ID] {
			hs = append(hs, h)
		}
	}
	for _, r := range s.rs {
		if want[r.HostnameID] {
			rs = append(rs, r)
		}
	}
	for _, c := range s.cs {
		if want[c.HostnameID] {
			cs = append(cs, c)
		}
	}
	return hs, rs, cs, nil
}

// readAll runs reads, each into its model; on PostgreSQL their prepared
// statements, in one round trip (one simple query holds them).
func (q Queries) readAll(ctx context.Context, reads []read) error {
	if q.dialect != Postgres { // an in-process library: no round trips to save
		for _, r := range reads {
			if err := r.sel.Scan(ctx); err != nil {
				return mapErr(err)
			}
		}
		return nil
	}
	var (
		text []string
		args []any
	)
	for _, r := range reads {
		text, args = append(text, r.stmt.call), append(args, r.args...)
	}
	rows, err := q.db.QueryContext(ctx, strings.Join(text, "; "), args...)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	for i, r := range reads {
		if i > 0 && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return mapErr(err)
			}
			return fmt.Errorf("storage: read %d of %d returned no result", i+1, len(reads))
		}
		if err := q.scanSet(ctx, rows, r.set); err != nil {
			return mapErr(err)
		}
	}
	return mapErr(rows.Close())
}

// scanSet scans the rows of the current result set, each into next().
func (q Queries) scanSet(ctx context.Context, rows *sql.Rows, next func() any) error {
	db := q.db.NewSelect().DB()
	for rows.Next() { // until it says no once: then the next result set
		if err := db.ScanRow(ctx, rows, next()); err != nil {
			return err
		}
	}
	return rows.Err()
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
