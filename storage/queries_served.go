package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
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
		hs, rs, cs := q.served.of(ids)
		return hs, rs, cs, nil
	}
	reads, sets := q.servedReads(&hs, &rs, &cs, ids)
	err := q.readAll(ctx, reads, sets)
	if err != nil {
		return nil, nil, nil, err
	}
	return hs, rs, cs, nil
}

// servedReads are HostnamesWithRows's reads of ids, and where their rows go.
func (q Queries) servedReads(hs *[]Hostname, rs *[]Record, cs *[]Challenge, ids []string) ([]*bun.SelectQuery, []func() any) {
	return []*bun.SelectQuery{q.hostnamesByID(hs, ids), q.records(rs, ids), q.challenges(cs, ids)},
		[]func() any{next(hs), next(rs), next(cs)}
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
		reads    = []*bun.SelectQuery{q.changesAfter(&cs, after, limit)}
		sets     = []func() any{next(&cs)}
		sv       *served
	)
	if len(also) > 0 {
		reads, sets = append(reads, q.changesIn(&gaps, also)), append(sets, next(&gaps))
	}
	if len(ids) > 0 && q.dialect == Postgres { // SQLite has no round trip to save
		sv = &served{ids: map[string]bool{}}
		r, s := q.servedReads(&sv.hs, &sv.rs, &sv.cs, ids)
		reads, sets = append(reads, r...), append(sets, s...)
	}
	if err := q.readAll(ctx, reads, sets); err != nil {
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

// of is HostnamesWithRows's answer for ids, its rows in the order read.
func (s *served) of(ids []string) ([]Hostname, []Record, []Challenge) {
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
	return hs, rs, cs
}

// readAll runs reads, each into its model; on PostgreSQL in one round
// trip (one simple query holds them), each result set's rows where sets
// says.
func (q Queries) readAll(ctx context.Context, reads []*bun.SelectQuery, sets []func() any) error {
	if q.dialect != Postgres { // an in-process library: no round trips to save
		for _, r := range reads {
			if err := r.Scan(ctx); err != nil {
				return mapErr(err)
			}
		}
		return nil
	}
	text := make([]string, len(reads))
	for i, r := range reads {
		text[i] = r.String()
	}
	rows, err := q.db.QueryContext(ctx, strings.Join(text, "; "))
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	for i, next := range sets {
		if i > 0 && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return mapErr(err)
			}
			return fmt.Errorf("storage: read %d of %d returned no result", i+1, len(sets))
		}
		if err := q.scanSet(ctx, rows, next); err != nil {
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
