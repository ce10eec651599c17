package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// recorder is a Consumer that records what the feed asks of it.
type recorder struct {
	mu       sync.Mutex
	loads    int
	loadLast int64 // LastChange as the latest Load saw it
	applied  []storage.Change
}

func (r *recorder) Load(ctx context.Context, q storage.Queries) error {
	last, err := q.LastChange(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loads++
	r.loadLast = last
	return nil
}

func (r *recorder) Apply(_ context.Context, _ storage.Queries, cs []storage.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied = append(r.applied, cs...)
	return nil
}

func (r *recorder) ids() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int64, len(r.applied))
	for i, c := range r.applied {
		ids[i] = c.ID
	}
	return ids
}

func (r *recorder) loaded() (n int, last int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loads, r.loadLast
}

// startFeed runs a feed on s until the test ends and waits for its snapshot.
func startFeed(t *testing.T, s *storage.Store) (*storage.Feed, *recorder) {
	t.Helper()
	rec := &recorder{}
	f := storage.NewFeed(s, rec, 50*time.Millisecond, slog.New(slog.DiscardHandler))
	runFeed(t, f)
	waitFor(t, "the feed to load", f.Loaded)
	return f, rec
}

// runFeed runs f until tb ends.
func runFeed(tb testing.TB, f *storage.Feed) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
}

func waitApplied(t *testing.T, f *storage.Feed, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := f.WaitApplied(ctx, id); err != nil {
		t.Fatalf("WaitApplied(%d): %v (applied %d)", id, err, f.Applied())
	}
}

// change writes one change row for a hostname and returns its id.
func change(t *testing.T, s *storage.Store, ref string) int64 {
	t.Helper()
	return write(t, s, func(ctx context.Context, tx *storage.Tx) error {
		return tx.Changed(ctx, storage.KindHostname, ref)
	})
}

func checkFeedErr(t *testing.T, f *storage.Feed) {
	t.Helper()
	if err := f.Err(); err != nil {
		t.Errorf("feed Err = %v", err)
	}
}

func TestFeedDeliversWrite(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		f, rec := startFeed(t, s)
		if n, last := rec.loaded(); n != 1 || last != 0 || f.Applied() != 0 {
			t.Fatalf("Load calls %d (last %d), Applied %d; want 1 load of an empty store", n, last, f.Applied())
		}
		id := write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			a := &storage.Account{ID: acct, Name: "a", Plan: "free", CreatedAt: 1}
			return errors.Join(tx.InsertAccount(ctx, a), tx.Changed(ctx, storage.KindAccount, acct))
		})
		waitApplied(t, f, id)
		rec.mu.Lock()
		got := slices.Clone(rec.applied)
		rec.mu.Unlock()
		if len(got) != 1 || got[0].ID != id || got[0].Kind != storage.KindAccount || got[0].Ref != acct {
			t.Errorf("applied %+v; want one account change %d", got, id)
		}
		if f.Applied() != id {
			t.Errorf("Applied = %d, want %d", f.Applied(), id)
		}

		// A change that never comes leaves WaitApplied to its context.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if err := f.WaitApplied(ctx, id+1); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitApplied(unwritten id) = %v, want DeadlineExceeded", err)
		}
		checkFeedErr(t, f)
	})
}

func TestFeedDeliversAll(t *testing.T) {
	const writes = 200
	for _, workers := range []int{1, 8} {
		t.Run(fmt.Sprintf("%d writers", workers), func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				f, rec := startFeed(t, s)
				var (
					mu    sync.Mutex
					wrote []int64
					wg    sync.WaitGroup
				)
				for w := range workers {
					wg.Go(func() {
						for i := range writes / workers {
							id, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
								return tx.Changed(ctx, storage.KindHostname, fmt.Sprintf("w%d-%d", w, i))
							})
							if err != nil {
								t.Errorf("Write: %v", err)
								return
							}
							mu.Lock()
							wrote = append(wrote, id)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if len(wrote) != writes {
					t.Fatalf("%d writes succeeded, want %d", len(wrote), writes)
				}
				for _, id := range wrote {
					waitApplied(t, f, id)
				}

				got := rec.ids()
				if workers == 1 && !slices.Equal(got, wrote) {
					t.Errorf("applied %v\nwant %v (every write, in id order)", got, wrote)
				}
				slices.Sort(got)
				slices.Sort(wrote)
				if !slices.Equal(got, wrote) {
					t.Errorf("applied (sorted) %v\nwant %v (each write exactly once)", got, wrote)
				}
				if want := wrote[len(wrote)-1]; f.Applied() != want {
					t.Errorf("Applied = %d, want %d", f.Applied(), want)
				}
				checkFeedErr(t, f)
			})
		})
	}
}

func TestFeedStartsAfterExistingChanges(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		var last int64
		for i := range 3 {
			last = change(t, s, fmt.Sprint("before-", i))
		}
		f, rec := startFeed(t, s)
		if n, loadLast := rec.loaded(); n != 1 || loadLast != last {
			t.Errorf("Load calls %d, saw last change %d; want 1, %d", n, loadLast, last)
		}
		if f.Applied() != last {
			t.Errorf("Applied = %d, want %d", f.Applied(), last)
		}
		waitApplied(t, f, last) // already in the snapshot: returns at once

		id := change(t, s, "after")
		waitApplied(t, f, id)
		if got := rec.ids(); !slices.Equal(got, []int64{id}) {
			t.Errorf("applied %v, want only the new change [%d]", got, id)
		}
		checkFeedErr(t, f)
	})
}

// TestFeedOutOfOrderCommit has the transaction holding the lower change id
// commit after the one holding the higher id: the feed must see the higher
// id first, keep the lower one as a gap, and still apply it.
func TestFeedOutOfOrderCommit(t *testing.T) {
	eachDialect(t, func(t *testing.T, d storage.Dialect) {
		if d != storage.Postgres {
			t.Skip("SQLite runs one write transaction at a time")
		}
		s := storagetest.Open(t, d)
		f, rec := startFeed(t, s)
		ctx := t.Context()

		type result struct {
			id  int64
			err error
		}
		gotLow, lowDone := make(chan int64, 1), make(chan result, 1)
		release := make(chan struct{})
		var once sync.Once
		commitLow := func() { once.Do(func() { close(release) }) }
		t.Cleanup(commitLow)
		go func() {
			id, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
				if err := tx.Changed(ctx, storage.KindHostname, "low"); err != nil {
					return err
				}
				if err := tx.Flush(ctx); err != nil { // take the id now
					return err
				}
				id, err := tx.LastChange(ctx) // sees its own uncommitted row
				if err != nil {
					return err
				}
				gotLow <- id
				<-release
				return nil
			})
			lowDone <- result{id, err}
		}()
		var low int64
		select {
		case low = <-gotLow:
		case r := <-lowDone:
			t.Fatalf("first write ended before taking its id: %v", r.err)
		}

		high := change(t, s, "high")
		if high <= low {
			t.Fatalf("second write got id %d, want more than %d", high, low)
		}
		waitApplied(t, f, high)
		if slices.Contains(rec.ids(), low) {
			t.Fatalf("change %d applied before its transaction committed", low)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if err := f.WaitApplied(short, low); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitApplied(%d) for an uncommitted change = %v, want DeadlineExceeded", low, err)
		}

		commitLow()
		if r := <-lowDone; r.err != nil || r.id != low {
			t.Fatalf("first write = %d, %v; want %d, nil", r.id, r.err, low)
		}
		waitApplied(t, f, low)
		if got := rec.ids(); !slices.Equal(got, []int64{high, low}) {
			t.Errorf("applied %v, want [%d %d]", got, high, low)
		}
		if f.Applied() != high {
			t.Errorf("Applied = %d, want %d", f.Applied(), high)
		}
		checkFeedErr(t, f)
	})
}

// A read of the changes that fails is tried again by itself, soon: here
// nothing else would wake the feed (no write, no notification, a poll of
// an hour). A write waiting to be served (WaitApplied) is answered when
// its wait runs out, served or not, so a feed that waited for the next
// poll or write would leave an acknowledged name unserved meanwhile.
func TestFeedRetriesFailedRead(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		f := storage.NewFeed(s, &recorder{}, time.Hour, slog.New(slog.DiscardHandler))
		runFeed(t, f)
		waitFor(t, "the feed to load", f.Loaded)
		exec := func(q string) {
			t.Helper()
			if err := s.Exec(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		exec("ALTER TABLE changes RENAME TO changes_away")
		f.Wake()
		waitFor(t, "the feed's read to fail", func() bool { return f.Err() != nil })
		exec("ALTER TABLE changes_away RENAME TO changes")
		waitFor(t, "the feed to read again by itself", func() bool { return f.Err() == nil })
	})
}
