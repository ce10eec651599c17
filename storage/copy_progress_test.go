package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// addChanges writes n more rows into changes (ids from 1000), in
// multi-row inserts: enough rows for a table to take several batches.
func addChanges(t *testing.T, s *storage.Store, n, size int) {
	t.Helper()
	ref := strings.Repeat("r", size)
	for start := 0; start < n; start += 500 {
		var b strings.Builder
		b.WriteString("INSERT INTO changes (id, kind, ref, created_at) VALUES ")
		for i := start; i < min(n, start+500); i++ {
			if i > start {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, 'hostname', '%s', %d)", 1000+i, ref, i)
		}
		if err := s.Exec(t.Context(), b.String()); err != nil {
			t.Fatal(err)
		}
	}
}

// The progress hook hears of every table in copy order: once as it
// starts, after each batch (copyBatch, 200 rows), and once done with
// every source row; the counts it gives are the ones Copy returns.
func TestCopyProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to storage.Dialect
		extra    int     // changes rows beside fill's two
		changes  []int64 // the rows each report on changes gives
	}{
		{"one batch", storage.SQLite, storage.Postgres, 0, []int64{0, 2, 2}},
		{"whole batches", storage.SQLite, storage.Postgres, 398, []int64{0, 200, 400, 400}},
		{"a part batch", storage.Postgres, storage.SQLite, 450, []int64{0, 200, 400, 452, 452}},
		{"same dialect", storage.SQLite, storage.SQLite, 450, []int64{0, 200, 400, 452, 452}},
		{"postgres to postgres", storage.Postgres, storage.Postgres, 199, []int64{0, 200, 201, 201}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			from, to := storagetest.Open(t, tc.from), storagetest.Open(t, tc.to)
			fill(t, from)
			addChanges(t, from, tc.extra, 8)
			var got []storage.TableProgress
			counts, err := storage.CopyWith(t.Context(), from, to, storage.CopyOptions{
				Progress: func(p storage.TableProgress) { got = append(got, p) },
			})
			if err != nil {
				t.Fatal(err)
			}
			tables := storage.Tables()
			var done []storage.TableProgress
			var changes []int64
			for i, p := range got {
				if p.Of != len(tables) || p.N < 1 || p.N > len(tables) || p.Table != tables[p.N-1] {
					t.Fatalf("report %d: table %d/%d %s, copy order %v", i, p.N, p.Of, p.Table, tables)
				}
				if i > 0 && got[i-1].Table == p.Table && (p.Rows < got[i-1].Rows || p.Elapsed < got[i-1].Elapsed) {
					t.Errorf("%s went back: %+v after %+v", p.Table, p, got[i-1])
				}
				if (i == 0 || got[i-1].Done) && (p.Rows != 0 || p.Done) {
					t.Errorf("%s's first report %+v, want 0 rows, not done", p.Table, p)
				}
				if p.Table == "changes" {
					changes = append(changes, p.Rows)
				}
				if p.Done {
					done = append(done, p)
				}
			}
			if fmt.Sprint(changes) != fmt.Sprint(tc.changes) {
				t.Errorf("changes reported %v rows, want %v", changes, tc.changes)
			}
			if len(done) != len(tables) || len(counts) != len(tables) {
				t.Fatalf("%d tables done, %d counted, of %d", len(done), len(counts), len(tables))
			}
			for i, p := range done {
				if p.Table != counts[i].Table || p.Rows != p.Total || p.Rows != counts[i].From {
					t.Errorf("%s done with %d of %d rows; the source holds %d", p.Table, p.Rows, p.Total, counts[i].From)
				}
			}
		})
	}
}

// A copy cancelled in the middle of a table (as ^C does to migrate) is
// rolled back: the target holds nothing, and the next copy into it runs
// as into a new store.
func TestCopyCancelled(t *testing.T) {
	for _, tc := range []struct{ from, to storage.Dialect }{
		{storage.SQLite, storage.Postgres},
		{storage.Postgres, storage.SQLite},
	} {
		t.Run(string(tc.from)+"-to-"+string(tc.to), func(t *testing.T) {
			t.Parallel()
			from, to := storagetest.Open(t, tc.from), storagetest.Open(t, tc.to)
			fill(t, from)
			addChanges(t, from, 1000, 8)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var last storage.TableProgress
			_, err := storage.CopyWith(ctx, from, to, storage.CopyOptions{Progress: func(p storage.TableProgress) {
				last = p
				if p.Table == "changes" && p.Rows >= 400 {
					cancel()
				}
			}})
			if err == nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled copy: %v, want context.Canceled", err)
			}
			if last.Table != "changes" || last.Done {
				t.Fatalf("the copy went on after the cancel to %+v", last)
			}
			if n, err := to.DataRows(t.Context()); err != nil || n != 0 {
				t.Fatalf("the target holds %d rows (%v) after a cancelled copy, want 0", n, err)
			}
			counts, err := storage.Copy(t.Context(), from, to)
			if err != nil {
				t.Fatalf("copy after a cancelled one: %v", err)
			}
			for _, c := range counts {
				if c.From != c.To || c.From == 0 {
					t.Errorf("%s: %d rows in the source, %d in the target", c.Table, c.From, c.To)
				}
			}
		})
	}
}

// A copy into PostgreSQL loads hostnames with the account counter's
// trigger off, as the tables' owner may, or on, as another role must; the
// counters come out right either way and the trigger is on afterwards.
func TestCopyCounter(t *testing.T) {
	for _, owner := range []bool{true, false} {
		t.Run(fmt.Sprintf("owner=%v", owner), func(t *testing.T) {
			t.Parallel()
			from := storagetest.Open(t, storage.SQLite)
			seed(t, from)
			var hs []*storage.Hostname
			for i := range 250 {
				hs = append(hs, host(fmt.Sprintf("h%d", i), acct, fmt.Sprintf("l%d", i), storage.StatusLive, 0, 1))
			}
			insertHosts(t, from, append(hs, host("p", other, "p", storage.StatusPending, 0, 1))...)
			role := fmt.Sprintf("hostmint_copier_%d", time.Now().UnixNano())
			if !owner {
				// Runs last, once the database (and the grants in it) is gone.
				t.Cleanup(func() { pgExec(t, storagetest.AdminDSN(), "DROP ROLE IF EXISTS "+role) })
			}
			dsn := storagetest.DSN(t, storage.Postgres)
			to, err := storage.Open(t.Context(), storage.Postgres, dsn)
			if err != nil {
				t.Fatal(err)
			}
			if !owner {
				to.Close()
				pgExec(t, dsn, "CREATE ROLE "+role+" LOGIN")
				// CREATE: Open's CREATE TABLE IF NOT EXISTS asks for it.
				pgExec(t, dsn, "GRANT CREATE ON SCHEMA public TO "+role)
				pgExec(t, dsn, "GRANT ALL ON ALL TABLES IN SCHEMA public TO "+role)
				pgExec(t, dsn, "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "+role)
				u, _ := url.Parse(dsn)
				u.User = url.User(role)
				if to, err = storage.Open(t.Context(), storage.Postgres, u.String()); err != nil {
					t.Fatal(err)
				}
			}
			defer to.Close()
			if _, err := storage.Copy(t.Context(), from, to); err != nil {
				t.Fatal(err)
			}
			if a, b := held(t, to, acct), held(t, to, other); a != 250 || b != 1 {
				t.Fatalf("counters %d, %d after the copy, want 250, 1", a, b)
			}
			insertHosts(t, to, host("new", acct, "new", storage.StatusLive, 0, 2))
			if a := held(t, to, acct); a != 251 {
				t.Fatalf("counter %d after an insert into the copy, want 251: the trigger is off", a)
			}
		})
	}
}

// pgExec runs q on the PostgreSQL database at dsn, as its admin would.
func pgExec(t *testing.T, dsn, q string) {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Errorf("%s: %v", q, err)
	}
}
