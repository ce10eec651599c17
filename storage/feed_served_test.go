package storage_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// servedReader is a Consumer that reads what a node serves for the
// hostnames of the changes it applies, as the hostname plugin does, and
// counts the statements each such read sends.
type servedReader struct {
	stmts *atomic.Int64
	mu    sync.Mutex
	reads []int64 // statements per read
	names []string
}

func (r *servedReader) Load(context.Context, storage.Queries) error { return nil }

func (r *servedReader) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	var ids []string
	for _, c := range cs {
		if c.Kind == storage.KindHostname {
			ids = append(ids, c.Ref)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	before := r.stmts.Load()
	hs, _, _, err := q.HostnamesWithRows(ctx, ids)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, r.stmts.Load()-before)
	for _, h := range hs {
		r.names = append(r.names, h.Name)
	}
	return nil
}

// runServedFeed runs a feed for a servedReader on s until tb ends. It
// polls once an hour: what it reads, it reads because a write woke it.
func runServedFeed(tb testing.TB, s *storage.Store) (*storage.Feed, *servedReader) {
	tb.Helper()
	r := &servedReader{stmts: s.CountStatements()}
	f := storage.NewFeed(s, r, time.Hour, slog.New(slog.DiscardHandler))
	runFeed(tb, f)
	for !f.Loaded() {
		time.Sleep(time.Millisecond)
	}
	return f, r
}

// A write of this node tells the feed its hostnames: on PostgreSQL the
// read that finds its changes reads their rows too, and what the node
// serves for them costs no statement of its own.
func TestFeedReadsOwnWritesRows(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seedServed(t, s)
		f, r := runServedFeed(t, s)
		id := write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			if err := tx.Changed(ctx, storage.KindHostname, "h-1"); err != nil {
				return err
			}
			return tx.Changed(ctx, storage.KindHostname, "h-2")
		})
		waitApplied(t, f, id)
		r.mu.Lock()
		defer r.mu.Unlock()
		slices.Sort(r.names)
		if !slices.Equal(r.names, []string{"one.example.test", "two.example.test"}) {
			t.Errorf("served %v, want h-1's and h-2's names", r.names)
		}
		if s.Dialect() == storage.Postgres && !slices.Equal(r.reads, []int64{0}) {
			t.Errorf("statements of the reads of what is served: %v, want [0] (read with the changes)", r.reads)
		}
	})
}

// BenchmarkWriteVisible is one caller's writes of a hostname's change,
// each waiting until this node's feed has applied it and read what the
// name serves: the feed's part of every write's latency.
func BenchmarkWriteVisible(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			s := storagetest.Open(b, d)
			seedServed(b, s)
			runServedFeed(b, s)
			for b.Loop() {
				if err := s.WriteVisible(b.Context(), func(ctx context.Context, tx *storage.Tx) error {
					return tx.Changed(ctx, storage.KindHostname, "h-1")
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
