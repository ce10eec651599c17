package hostnames

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// The cap is exact across nodes, whatever runs at once: two nodes on one
// PostgreSQL database (each with its own batches of the account's writes)
// create, release and revive expired names of one account, 24 callers on
// each. A reader samples the account throughout and never sees more
// active names than the cap; afterwards the account's counter matches its
// rows, and filling the account up stops at the cap exactly, with its
// expired names not counted. SQLite has one writer at a time, and no two
// nodes share a file, so the race is PostgreSQL's.
func TestCapExactAcrossNodes(t *testing.T) {
	t.Parallel()
	const capacity, held, expired = 40, 30, 5
	dsn := storagetest.DSN(t, storage.Postgres)
	ctx := context.Background()
	node := func() *Service {
		st, err := storage.Open(ctx, storage.Postgres, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return New(st, Config{Profile: 1, IdleExpiry: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	nodes := []*Service{node(), node()}
	c := capacity
	now := time.Now().UnixMilli()
	if _, err := nodes[0].store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "a", Plan: plans.Free, Cap: &c, Billing: true, CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "pool.test", Status: storage.DomainActive, CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	p := &access.Principal{AccountID: "acc", Scopes: access.All()}
	var (
		ipSeq atomic.Int64
		mu    sync.Mutex
		mine  []string // live names any caller may release
		stale []string // expired names any caller may revive
	)
	create := func(svc *Service) error {
		i := ipSeq.Add(1)
		ip := fmt.Sprintf("23.7.%d.%d", i>>8&255, i&255)
		h, err := svc.Create(ctx, p, CreateInput{IP: &ip})
		if err == nil {
			mu.Lock()
			mine = append(mine, h.ID)
			mu.Unlock()
		}
		return err
	}
	for range held {
		if err := create(nodes[0]); err != nil {
			t.Fatal(err)
		}
	}
	// Expire some: they stay counted by the account's counter, and the cap
	// check looks them up only at the cap.
	mu.Lock()
	stale, mine = append(stale, mine[:expired]...), mine[expired:]
	mu.Unlock()
	for _, id := range stale {
		if _, err := nodes[0].store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
			h, err := tx.LockHostname(ctx, id)
			if err != nil {
				return err
			}
			h.ExpiresAt = now - 1
			return tx.UpdateHostname(ctx, h)
		}); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	sampled := make(chan int)
	go func() { // what any reader sees, all along
		most := 0
		for {
			select {
			case <-stop:
				sampled <- most
				return
			default:
			}
			active, _, err := nodes[1].Usage(ctx, "acc")
			if err != nil {
				t.Error(err)
			}
			most = max(most, active)
		}
	}()

	var wg sync.WaitGroup
	var created, refused, revived, released atomic.Int64
	take := func(from *[]string) string {
		mu.Lock()
		defer mu.Unlock()
		if len(*from) == 0 {
			return ""
		}
		i := rand.IntN(len(*from))
		id := (*from)[i]
		*from = append((*from)[:i], (*from)[i+1:]...)
		return id
	}
	for n, svc := range nodes {
		for range 24 {
			wg.Go(func() {
				for range 6 {
					var err error
					switch r := rand.IntN(10); {
					case r < 6:
						if err = create(svc); err == nil {
							created.Add(1)
						}
					case r < 8:
						if id := take(&stale); id != "" {
							if _, err = svc.Renew(ctx, p, id); err == nil {
								revived.Add(1)
								mu.Lock()
								mine = append(mine, id)
								mu.Unlock()
							} else {
								mu.Lock()
								stale = append(stale, id)
								mu.Unlock()
							}
						}
					default:
						if id := take(&mine); id != "" {
							if err = svc.Release(ctx, p, id); err == nil {
								released.Add(1)
							}
						}
					}
					if err == nil {
						continue
					}
					if pe, ok := apierror.As(err); ok && strings.Contains(pe.Message, "cap reached") {
						refused.Add(1)
						continue
					}
					t.Errorf("node %d: %v", n, err)
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	if most := <-sampled; most > capacity {
		t.Errorf("a reader saw %d active names, cap %d", most, capacity)
	}
	t.Logf("%d created, %d refused at the cap, %d revived, %d released", created.Load(), refused.Load(), revived.Load(), released.Load())
	if refused.Load() == 0 {
		t.Error("no create was refused: the test never reached the cap")
	}

	// The counter the cap check reads matches the rows it counts.
	r := nodes[0].store.Reader()
	a, err := r.Account(ctx, "acc")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := r.CountActive(ctx, "acc", 0); err != nil || rows != a.ActiveHostnames {
		t.Errorf("account counter %d, %d live and pending rows (%v)", a.ActiveHostnames, rows, err)
	}
	// Filling the account from both nodes at once stops at the cap.
	var fill sync.WaitGroup
	for _, svc := range nodes {
		for range 16 {
			fill.Go(func() {
				for create(svc) == nil {
				}
			})
		}
	}
	fill.Wait()
	if active, _, err := nodes[0].Usage(ctx, "acc"); err != nil || active != capacity {
		t.Errorf("%d active names once full, want the cap, %d (%v)", active, capacity, err)
	}
}
