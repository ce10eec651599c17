package hostnames

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// fixture is a profile-1 service on a fresh store with one business
// account whose cap is out of the way, and a key of it.
type fixture struct {
	svc   *Service
	store *storage.Store
	p     *access.Principal
	stmts *atomic.Int64
}

func newFixture(tb testing.TB, d storage.Dialect) *fixture {
	tb.Helper()
	st := storagetest.Open(tb, d)
	huge := 10_000_000
	now := time.Now().UnixMilli()
	_, err := st.Write(context.Background(), func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "a", Plan: plans.Business, Cap: &huge, Billing: true, CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "pool.test", Status: storage.DomainActive, CreatedAt: now})
	})
	if err != nil {
		tb.Fatal(err)
	}
	svc := New(st, Config{Profile: 1, IdleExpiry: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &fixture{svc: svc, store: st, p: &access.Principal{AccountID: "acc", Scopes: access.All()}, stmts: st.CountStatements()}
}

func (f *fixture) create(tb testing.TB, i int) *storage.Hostname {
	ip := fmt.Sprintf("23.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	h, err := f.svc.Create(context.Background(), f.p, CreateInput{IP: &ip})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// The statements one create and one update send, BEGIN and COMMIT
// included: each is a round trip to PostgreSQL, where BEGIN and the
// repoint's UPDATE go with the statement after them, and COMMIT with the
// statement before it (storage/pgwire), and are not counted. A change
// that adds one should have to say why here.
func TestWriteRoundTrips(t *testing.T) {
	t.Parallel()
	// PostgreSQL sends the insert and the rate limit's charge with the
	// change row; SQLite runs them as statements of their own, in process.
	wants := map[storage.Dialect]map[string]int{
		storage.Postgres: {"create": 2, "update": 2},
		storage.SQLite:   {"create": 7, "update": 6},
	}
	for _, d := range storagetest.Dialects {
		want := wants[d]
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, d)
			f.stmts.Store(0)
			h := f.create(t, 1)
			got := map[string]int{"create": int(f.stmts.Swap(0))}
			ip := "23.9.9.9"
			if _, err := f.svc.Update(context.Background(), f.p, h.ID, UpdateInput{IP: &ip}); err != nil {
				t.Fatal(err)
			}
			got["update"] = int(f.stmts.Swap(0))
			// The insert that went with the change row was counted.
			if a, err := f.store.Reader().Account(context.Background(), "acc"); err != nil || a.ActiveHostnames != 1 {
				t.Errorf("after one create the account counts %d active hostnames (%v), want 1", a.ActiveHostnames, err)
			}
			for op, n := range want {
				if got[op] > n {
					t.Errorf("%s: %d statements, want at most %d", op, got[op], n)
				}
			}
			t.Logf("statements: create %d, update %d", got["create"], got["update"])
		})
	}
}

// Concurrent creates and updates of one account on PostgreSQL share
// batches whose parts' first reads are made together (storage.Expect):
// under one statement a write, where each part's own read made it more.
func TestOneAccountReadsAhead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storage.Postgres) // SQLite's statements are no round trips
	const callers = 16
	hs := make([]*storage.Hostname, callers)
	perWrite := func(op func(i int) error) float64 {
		f.stmts.Store(0)
		start := make(chan struct{})
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				errs[i] = op(i)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return float64(f.stmts.Load()) / callers
	}
	for round := range 3 {
		creates := perWrite(func(i int) (err error) {
			ip := fmt.Sprintf("23.%d.0.%d", round, i+1)
			hs[i], err = f.svc.Create(context.Background(), f.p, CreateInput{IP: &ip})
			return err
		})
		updates := perWrite(func(i int) error {
			ip := fmt.Sprintf("23.%d.1.%d", round, i+1)
			_, err := f.svc.Update(context.Background(), f.p, hs[i].ID, UpdateInput{IP: &ip})
			return err
		})
		if creates >= 1 || updates >= 1 {
			t.Errorf("round %d: %.2f statements a create, %.2f an update, want under 1", round, creates, updates)
		}
		t.Logf("round %d: %.2f statements a create, %.2f an update", round, creates, updates)
	}
}

// BenchmarkCreate creates hostnames into one account, on each store, and
// reports the statements a create sends.
func BenchmarkCreate(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			f := newFixture(b, d)
			f.stmts.Store(0)
			i := 0
			for b.Loop() {
				f.create(b, i)
				i++
			}
			b.ReportMetric(float64(f.stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}

// BenchmarkCreateOneAccount is BenchmarkCreate from 16 callers at once,
// all into the one account: its creates share batches (storage/group.go),
// and ns/op is the account's time per create.
func BenchmarkCreateOneAccount(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			f := newFixture(b, d)
			f.stmts.Store(0)
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					f.create(b, int(next.Add(1)))
				}
			})
			b.ReportMetric(float64(f.stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}

// BenchmarkUpdateOneAccount is BenchmarkCreateOneAccount for updates: 16
// callers at once repoint hostnames of the one account, each its own.
func BenchmarkUpdateOneAccount(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			f := newFixture(b, d)
			hs := make([]*storage.Hostname, 256)
			for i := range hs {
				hs[i] = f.create(b, i)
			}
			f.stmts.Store(0)
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1))
					ip := fmt.Sprintf("24.%d.%d.%d", i>>16&255, i>>8&255, i&255)
					if _, err := f.svc.Update(context.Background(), f.p, hs[i%len(hs)].ID, UpdateInput{IP: &ip}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(f.stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}

// Callers of different accounts, and of one account, asking for one label
// at once: one gets it, every other is answered 409, whether its check saw
// the winner's row, its insert met it at commit, or (one account's batch on
// PostgreSQL, whose new names wait for its last statement) the batch's
// last statement met it and its writes ran again alone.
func TestSameLabelRace(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, d)
			const callers = 8
			ps := make([]*access.Principal, callers)
			for i := range ps[:callers/2] { // the other half, in one account: its batches
				ps[callers/2+i] = f.p
				id := fmt.Sprintf("acc%d", i)
				if _, err := f.store.Write(context.Background(), func(ctx context.Context, tx *storage.Tx) error {
					return tx.InsertAccount(ctx, &storage.Account{ID: id, Name: id, Plan: plans.Pro, Billing: true, CreatedAt: 1})
				}); err != nil {
					t.Fatal(err)
				}
				ps[i] = &access.Principal{AccountID: id, Scopes: access.All()}
			}
			var wg sync.WaitGroup
			errs := make([]error, callers)
			for i := range ps {
				wg.Go(func() {
					ip, label := fmt.Sprintf("23.1.1.%d", i+1), "contested"
					_, errs[i] = f.svc.Create(context.Background(), ps[i], CreateInput{IP: &ip, Label: &label})
				})
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
					continue
				}
				if pe, ok := apierror.As(err); !ok || httperr.Status(pe.Code) != 409 {
					t.Errorf("a losing create answered %v, want 409", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d creates got the label, want exactly 1", won)
			}
		})
	}
}

// BenchmarkCreateAccounts is BenchmarkCreateOneAccount with its callers
// spread over accounts: 16 accounts with one caller each, and 64 with
// four each. ns/op is the store's time per create; the write pipeline
// (storage/group.go) should make it an account's own.
func BenchmarkCreateAccounts(b *testing.B) {
	for _, shape := range []struct{ accounts, callers int }{{1, 16}, {16, 1}, {64, 4}} {
		for _, d := range storagetest.Dialects {
			b.Run(fmt.Sprintf("%dx%d/%s", shape.accounts, shape.callers, d), func(b *testing.B) {
				f := newFixture(b, d)
				ps := make([]*access.Principal, shape.accounts)
				for i := range ps {
					id := fmt.Sprintf("acc%d", i)
					if _, err := f.store.Write(context.Background(), func(ctx context.Context, tx *storage.Tx) error {
						huge := 10_000_000
						return tx.InsertAccount(ctx, &storage.Account{ID: id, Name: id, Plan: plans.Business, Cap: &huge, Billing: true, CreatedAt: 1})
					}); err != nil {
						b.Fatal(err)
					}
					ps[i] = &access.Principal{AccountID: id, Scopes: access.All()}
				}
				f.stmts.Store(0)
				var next, caller atomic.Int64
				b.SetParallelism(max(1, shape.accounts*shape.callers/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					p := ps[int(caller.Add(1)-1)%len(ps)]
					for pb.Next() {
						i := int(next.Add(1))
						ip := fmt.Sprintf("23.%d.%d.%d", i>>16&255, i>>8&255, i&255)
						if _, err := f.svc.Create(context.Background(), p, CreateInput{IP: &ip}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(f.stmts.Load())/float64(b.N), "stmts/op")
			})
		}
	}
}
