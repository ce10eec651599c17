package storage_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// changeIDs lists the ids left in the changes table.
func changeIDs(t *testing.T, s *storage.Store) []int64 {
	t.Helper()
	cs, err := s.Reader().ChangesAfter(t.Context(), 0, nil, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{}
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// changesAged writes n changes, then dates change i (from 1) age(i) ago.
func changesAged(t *testing.T, s *storage.Store, now time.Time, n int, age func(i int) time.Duration) {
	t.Helper()
	for i := range n {
		change(t, s, fmt.Sprint("h", i))
	}
	for i := 1; i <= n; i++ {
		if err := s.Exec(t.Context(), "UPDATE changes SET created_at = ? WHERE id = ?", now.Add(-age(i)).UnixMilli(), i); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(from, to int64) []int64 {
	out := []int64{}
	for id := from; id <= to; id++ {
		out = append(out, id)
	}
	return out
}

func TestCompactChanges(t *testing.T) {
	old := func(int) time.Duration { return 48 * time.Hour }
	tests := []struct {
		name  string
		n     int
		age   func(i int) time.Duration
		keep  storage.ChangeRetention
		left  []int64 // ids kept
		start int64   // compacted through, before a second run that deletes nothing
	}{
		{name: "empty", n: 0, age: old, keep: storage.ChangeRetention{Age: time.Hour, Count: 3}, left: []int64{}},
		{name: "old ones past the count go", n: 10, age: old, keep: storage.ChangeRetention{Age: time.Hour, Count: 3},
			left: ids(8, 10), start: 7},
		{name: "young ones stay past the count", n: 10, age: func(i int) time.Duration { return time.Duration(11-i) * time.Minute },
			keep: storage.ChangeRetention{Age: 5*time.Minute + 30*time.Second, Count: 2}, left: ids(6, 10), start: 5},
		{name: "the count keeps old ones", n: 10, age: old, keep: storage.ChangeRetention{Age: time.Hour, Count: 20},
			left: ids(1, 10)},
		{name: "the newest stays with count 0", n: 10, age: old, keep: storage.ChangeRetention{Age: time.Hour},
			left: ids(10, 10), start: 9},
		// A row written by a clock ahead of the others ends what goes:
		// compaction deletes a prefix of the ids, never a hole.
		{name: "a young row stops it", n: 10, age: func(i int) time.Duration {
			if i == 4 {
				return time.Minute
			}
			return 48 * time.Hour
		}, keep: storage.ChangeRetention{Age: time.Hour, Count: 1}, left: ids(4, 10), start: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				ctx := t.Context()
				now := time.Now()
				changesAged(t, s, now, tc.n, tc.age)
				n, err := s.CompactChanges(ctx, tc.keep, now)
				if err != nil {
					t.Fatal(err)
				}
				if got := changeIDs(t, s); !slices.Equal(got, tc.left) || n != int64(tc.n-len(tc.left)) {
					t.Fatalf("deleted %d, left %v; want %v", n, got, tc.left)
				}
				through, err := s.Reader().CompactedThrough(ctx)
				if err != nil || through != tc.start {
					t.Fatalf("CompactedThrough = %d, %v; want %d", through, err, tc.start)
				}
				// Idempotent: the same retention again deletes nothing.
				if n, err := s.CompactChanges(ctx, tc.keep, now); n != 0 || err != nil {
					t.Fatalf("second run deleted %d, %v", n, err)
				}
				// Ids never go back: the next change follows the newest ever written.
				if tc.n > 0 {
					if id := change(t, s, "next"); id != int64(tc.n)+1 {
						t.Fatalf("next change id %d, want %d", id, tc.n+1)
					}
				}
			})
		})
	}
}

// More rows than a batch, compacted by two nodes at once: each row is
// deleted once, the horizon is where one run alone leaves it.
func TestCompactChangesBatchesConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		const n, keep = 12_000, 500
		seedChanges(t, s, n, time.Now().Add(-48*time.Hour))
		var (
			wg      sync.WaitGroup
			deleted atomic.Int64
		)
		for range 2 {
			wg.Go(func() {
				d, err := s.CompactChanges(ctx, storage.ChangeRetention{Age: time.Hour, Count: keep}, time.Now())
				if err != nil {
					t.Error(err)
				}
				deleted.Add(d)
			})
		}
		wg.Wait()
		if got := changeIDs(t, s); !slices.Equal(got, ids(n-keep+1, n)) || deleted.Load() != n-keep {
			t.Fatalf("deleted %d, left %d rows from %v; want %d left from %d", deleted.Load(), len(got), got[:1], keep, n-keep+1)
		}
		if through, err := s.Reader().CompactedThrough(ctx); through != n-keep || err != nil {
			t.Fatalf("CompactedThrough = %d, %v; want %d", through, err, n-keep)
		}
	})
}

// seedChanges writes n change rows (ids 1..n) made at at, in one statement.
func seedChanges(t testing.TB, s *storage.Store, n int, at time.Time) {
	t.Helper()
	q := "INSERT INTO changes (kind, ref, created_at) SELECT 'hostname', 'h' || g, ? FROM generate_series(1, ?) AS g"
	if s.Dialect() == storage.SQLite {
		q = "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?) " +
			"INSERT INTO changes (kind, ref, created_at) SELECT 'hostname', 'h' || i, ? FROM g"
		if err := s.Exec(t.Context(), q, n, at.UnixMilli()); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := s.Exec(t.Context(), q, at.UnixMilli(), n); err != nil {
		t.Fatal(err)
	}
}

// gated is a Consumer whose Apply can be held: a feed stuck in it falls
// behind while others write and compact.
type gated struct {
	recorder
	hold chan chan struct{} // an Apply takes one and waits until it is closed
}

func (g *gated) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	select {
	case wait := <-g.hold:
		<-wait
	default:
	}
	return g.recorder.Apply(ctx, q, cs)
}

// A node whose next changes were compacted away before it read them loads
// a full snapshot, says so, and goes on from there; a jump in ids that
// compaction did not make (a rolled-back write) reloads nothing.
func TestFeedReloadsBehindCompaction(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		g := &gated{hold: make(chan chan struct{}, 1)}
		f := storage.NewFeed(s, g, time.Hour, slog.New(slog.DiscardHandler))
		var reloads atomic.Int32
		f.Reloaded = func() { reloads.Add(1) }
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.Run(fctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
		waitFor(t, "the feed to load", f.Loaded)

		// A write that rolls back leaves a hole in the ids on PostgreSQL.
		s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
			tx.Changed(ctx, storage.KindHostname, "rolled back")
			return fmt.Errorf("roll back")
		})
		waitApplied(t, f, change(t, s, "after the hole"))
		if n, _ := g.loaded(); n != 1 || reloads.Load() != 0 {
			t.Fatalf("a hole in the ids: %d loads, %d reloads; want 1, 0", n, reloads.Load())
		}

		// Hold the feed in Apply of the next change while 20 more are
		// written and all but the newest 5 compacted away.
		release := make(chan struct{})
		g.hold <- release
		first := change(t, s, "held")
		waitFor(t, "the feed to take the held change", func() bool { return len(g.hold) == 0 })
		var last int64
		for i := range 20 {
			last = change(t, s, fmt.Sprint("missed-", i))
		}
		if err := s.Exec(ctx, "UPDATE changes SET created_at = 0"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CompactChanges(ctx, storage.ChangeRetention{Age: time.Hour, Count: 5}, time.Now()); err != nil {
			t.Fatal(err)
		}
		close(release)
		waitApplied(t, f, last)
		if n, loadLast := g.loaded(); n != 2 || loadLast != last || reloads.Load() != 1 {
			t.Fatalf("after falling behind: %d loads (the last at %d), %d reloads; want 2 at %d, 1", n, loadLast, reloads.Load(), last)
		}
		if applied := g.ids(); applied[len(applied)-1] != first {
			t.Fatalf("applied %v: want nothing after %d (the snapshot has it)", applied, first)
		}
		// And it goes on tailing.
		waitApplied(t, f, change(t, s, "later"))
		checkFeedErr(t, f)
	})
}

// BenchmarkCompactChanges times compacting a million change rows down to
// the newest 100 000, on each store:
//
//	go test -run XXX -bench CompactChanges -benchtime 1x ./storage/
func BenchmarkCompactChanges(b *testing.B) {
	const rows, keep = 1_000_000, 100_000
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			s := storagetest.Open(b, d)
			for range b.N {
				b.StopTimer()
				if err := s.Exec(b.Context(), "DELETE FROM changes"); err != nil {
					b.Fatal(err)
				}
				seedChanges(b, s, rows, time.Now().Add(-48*time.Hour))
				b.StartTimer()
				n, err := s.CompactChanges(b.Context(), storage.ChangeRetention{Age: time.Hour, Count: keep}, time.Now())
				if err != nil || n != rows-keep {
					b.Fatalf("deleted %d, %v; want %d", n, err, rows-keep)
				}
			}
			b.ReportMetric(float64(rows-keep)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
