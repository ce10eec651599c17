package storage

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/uptrace/bun"
)

// A batch's first reads in one round trip. On PostgreSQL the parts of a
// batch (group.go) run one after the other on one connection, and each
// began with a round trip of its own: a create's read of its account and
// of the pool domain for its label. Those reads do not depend on the parts
// before (their new hostnames wait for the last statement, batch_accounts.go),
// so a write that knows its first read says so (Expect), and the batch
// makes every part's in one statement before the first part runs. A
// part's read then finds its answer waiting instead of sending its own
// (executeFirst).
//
// The answers are as committed when the batch began, not when the part
// runs: a few parts' time earlier. A row read with its lock (a hostname,
// an account) is the same either way; a label's use, read without one, is
// the difference every check of a label lives with, and the unique index
// refuses a label taken twice. What the parts before write is another
// matter, so answers not yet taken are dropped:
//   - all of them, once a part's rule sends or keeps a statement of its
//     own (a read the batch did not make for it, or a write): the
//     connection's count of statements tells (part, group.go);
//   - for a write the part puts off (sent with the next statement), those
//     it may change, derived from the write's model and the schema's
//     triggers (settlePrefetched).
// The parts after then read for themselves. A part's read is taken only
// if the batch made the same calls for it (sameCalls): a write that
// expects wrongly costs a round trip, never a wrong answer.

// Expected is the read a grouped write will make first (Expect).
type Expected struct {
	key   string
	calls []pgCall
}

type expectKey struct{}

// Expect tells the batch a grouped write runs in (WriteGrouped) the read
// its write makes first; outside a batch on PostgreSQL it changes nothing.
func Expect(ctx context.Context, e Expected) context.Context {
	return context.WithValue(ctx, expectKey{}, e)
}

// ExpectAccountAndPool is what AccountAndPool(id, label, except) reads in a
// batch's part.
func ExpectAccountAndPool(id, label, except string) Expected {
	return Expected{key: accountInPoolKey(id, label, except), calls: accountInPoolCalls(id, label, except, new(Account), new(poolDomainRow))}
}

// ExpectLockedHostname is what LockHostname(id) reads in a batch's part.
func ExpectLockedHostname(id string) Expected {
	return Expected{key: lockHostnameKey(id), calls: []pgCall{{lockHostname, []any{id}, new(Hostname)}}}
}

// ExpectHostnameForMint is what HostnameForMint(domainID, label,
// accountID, except) reads in a batch's part.
func ExpectHostnameForMint(domainID, label, accountID, except string) Expected {
	return Expected{key: byLabelForKey(domainID, label, accountID, except),
		calls: byLabelForCalls(domainID, label, accountID, except, new(Hostname), new(Account), new(poolDomainRow))}
}

// prefetched is a read the batch made for a part: its calls, scanned.
type prefetched struct {
	calls []pgCall
	found []bool
}

// prefetch makes, in one round trip, the first reads the parts of batch
// expect (those whose callers still wait), when two or more do: one
// part's read costs its round trip either way.
func (t *Tx) prefetch(ctx context.Context, batch []*groupPart) error {
	if t.pg == nil { // no connection of ours to tell a part's own statements by (part)
		return nil
	}
	var (
		es    []Expected
		calls []pgCall
		seen  = map[string]bool{}
	)
	for _, p := range batch {
		e, ok := p.ctx.Value(expectKey{}).(Expected)
		if !ok || p.ctx.Err() != nil || seen[e.key] {
			continue
		}
		seen[e.key] = true
		es = append(es, e)
		calls = append(calls, e.calls...)
	}
	if len(es) < 2 {
		return nil
	}
	found, err := t.executeAll(ctx, calls...)
	if err != nil {
		return err
	}
	t.prefetched = make(map[string]prefetched, len(es))
	for _, e := range es {
		t.prefetched[e.key] = prefetched{calls: e.calls, found: found[:len(e.calls)]}
		found = found[len(e.calls):]
	}
	return nil
}

// settlePrefetched drops the reads made ahead that a part's writes (ws,
// sent with the next statement) may change. Which ones is derived, not
// listed: an update changes its row, named by its model's table and
// primary key, and the rows of the tables the schema's triggers on its
// table write (triggered, read from the migrations); a read that found
// any of those is dropped. An insert put off, or anything else, drops them
// all (a read that found nothing may find it now), but for the rows kept
// for the batch's last statement (keepLater), which no read sees before it.
func (t *Tx) settlePrefetched(ws []laterWrite) {
	for _, w := range ws {
		if _, ok := w.insert.(*SeenMAC); ok {
			continue // kept: see keepLater
		}
		if w.update == nil {
			t.prefetched = nil
			return
		}
		table, key := rowOf(t.tx, w.update)
		for k, r := range t.prefetched {
			if r.reads(t.tx, table, key) {
				delete(t.prefetched, k)
			}
		}
	}
}

// reads reports whether r found the row key of table, or a row a trigger
// on table writes.
func (r prefetched) reads(db bun.IDB, table, key string) bool {
	for i, c := range r.calls {
		if !r.found[i] {
			continue
		}
		t, k := rowOf(db, c.dest)
		if t == table && k == key || slices.Contains(triggered()[table], t) {
			return true
		}
	}
	return false
}

// rowOf names the row v (a pointer to a model) holds: its table, and its
// primary key's values.
func rowOf(db bun.IDB, v any) (table, key string) {
	t := db.Dialect().Tables().Get(reflect.TypeOf(v).Elem())
	rv := reflect.ValueOf(v).Elem()
	var b strings.Builder
	for _, f := range t.PKs {
		fmt.Fprintf(&b, "%v\x00", f.Value(rv).Interface())
	}
	return t.Name, b.String()
}

// triggered is, for each table, the tables its triggers write, as the
// migrations' SQLite triggers say (each spells its body out; PostgreSQL's
// do the same through functions).
var triggered = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for _, m := range migrations {
		for _, t := range triggerRE.FindAllStringSubmatch(m.dialect[SQLite], -1) {
			for _, w := range writesRE.FindAllStringSubmatch(t[2], -1) {
				if !slices.Contains(out[t[1]], w[1]) {
					out[t[1]] = append(out[t[1]], w[1])
				}
			}
		}
	}
	return out
})

var (
	triggerRE = regexp.MustCompile(`(?s)CREATE TRIGGER \w+ .*? ON (\w+) .*? BEGIN (.*?) END`)
	writesRE  = regexp.MustCompile(`(?:UPDATE|INSERT INTO|DELETE FROM) (\w+)`)
)

// executeFirst is executeAll for the read a part expected (key): the
// batch's answer to it, if the batch made the same calls for it, else a
// round trip as executeAll.
func (q Queries) executeFirst(ctx context.Context, key string, calls ...pgCall) ([]bool, error) {
	if q.tx != nil {
		if r, ok := q.tx.prefetched[key]; ok {
			delete(q.tx.prefetched, key)
			if sameCalls(r.calls, calls) {
				for i, c := range calls {
					reflect.ValueOf(c.dest).Elem().Set(reflect.ValueOf(r.calls[i].dest).Elem())
				}
				return r.found, nil
			}
		}
	}
	return q.executeAll(ctx, calls...)
}

// sameCalls reports whether a and b run the same statements with the same
// arguments into destinations of the same types.
func sameCalls(a, b []pgCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].s != b[i].s || !reflect.DeepEqual(a[i].args, b[i].args) || reflect.TypeOf(a[i].dest) != reflect.TypeOf(b[i].dest) {
			return false
		}
	}
	return true
}
