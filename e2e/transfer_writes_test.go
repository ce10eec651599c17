package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// seedZone writes n live hostnames of one account under example.org
// straight into a fresh store of dialect d, as a bulk import would, and
// returns its DSN and the account.
func seedZone(t *testing.T, d storage.Dialect, dir string, n int) (dsn, account string) {
	t.Helper()
	dsn = filepath.Join(dir, "hostmint.db")
	if d == storage.Postgres {
		dsn = storagetest.DSN(t, d)
	}
	ctx := context.Background()
	s, err := storage.Open(ctx, d, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UnixMilli()
	_, err = s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc_seed", Name: "seed", Plan: "business", Billing: true, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.InsertDomain(ctx, &storage.Domain{ID: "dom_seed", Name: "example.org", Status: storage.DomainActive, CreatedAt: now}); err != nil {
			return err
		}
		hs := make([]storage.Hostname, 0, n)
		for i := range n {
			label := fmt.Sprintf("s%06d", i)
			ip := fmt.Sprintf("198.18.%d.%d", i/250, i%250+1)
			hs = append(hs, storage.Hostname{ID: "h_" + label, AccountID: "acc_seed", DomainID: "dom_seed", Label: label,
				Name: label + ".example.org", IP: ip, Addrs: ip, Class: "public", Certificate: "self",
				Status: storage.StatusLive, CreatedAt: now, UpdatedAt: now})
		}
		for len(hs) > 0 {
			k := min(len(hs), 2000)
			if err := tx.InsertHostnames(ctx, hs[:k]); err != nil {
				return err
			}
			hs = hs[k:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dsn, "acc_seed"
}

// A secondary that loads the zone while the API keeps writing is then kept
// current by IXFR alone: the AXFR was the zone at its serial, so the first
// IXFR after it applies cleanly and no second AXFR is needed.
func TestTransferUnderWrites(t *testing.T) {
	t.Parallel()
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			const names = 20_000
			dir := t.TempDir()
			dsn, account := seedZone(t, d, dir, names)
			knotPort := freePort(t)
			s := start(t, options{dialect: d, dsn: dsn, dir: dir, block: []string{
				fmt.Sprintf("transfer {\n    to 127.0.0.1:%d\n  }", knotPort),
				fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
			}})
			key := s.key(t, account, nil)

			// Writers repoint seeded names until told to stop.
			var stop atomic.Bool
			var wg sync.WaitGroup
			var writes atomic.Int64
			for w := range 8 {
				wg.Go(func() {
					for i := w; !stop.Load(); i += 8 {
						id := fmt.Sprintf("h_s%06d", i%names)
						r := s.do("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": fmt.Sprintf("198.19.%d.%d", i%250, w+1)})
						if r.status == 200 {
							writes.Add(1)
						}
					}
				})
			}
			time.Sleep(300 * time.Millisecond)
			knot := startSecondary(t, "knot", knotPort, s.dnsAddr)
			loaded := within(15*time.Second, func() bool { _, ok := serialAt(knot.addr); return ok })
			time.Sleep(2 * time.Second) // writes go on after the load, each NOTIFYed
			stop.Store(true)
			wg.Wait()
			if !loaded {
				t.Fatal("the secondary did not load the zone")
			}
			if !within(10*time.Second, func() bool {
				a, okA := serialAt(s.dnsAddr)
				b, okB := serialAt(knot.addr)
				return okA && okB && a == b
			}) {
				t.Fatal("the secondary did not catch up with the primary's serial")
			}
			var sample []string
			for i := 0; i < names; i += 97 {
				sample = append(sample, fmt.Sprintf("s%06d.example.org", i))
			}
			if n := sameAnswers(s.dnsAddr, knot.addr, sample); n != "" {
				t.Errorf("the secondary answers %s differently from the primary", n)
			}
			b, _ := os.ReadFile(knot.log)
			axfrs := len(regexp.MustCompile(`AXFR, incoming, remote \S+, finished`).FindAll(b, -1))
			ixfrs := len(regexp.MustCompile(`IXFR, incoming, remote \S+, finished`).FindAll(b, -1))
			t.Logf("%d writes; the secondary: %d AXFR, %d IXFR", writes.Load(), axfrs, ixfrs)
			if knot.ixfrFailed() || axfrs != 1 {
				t.Errorf("the secondary needed %d whole transfers (IXFR failed: %v), want the first alone", axfrs, knot.ixfrFailed())
			}
			if ixfrs == 0 {
				t.Error("the secondary followed no write incrementally")
			}
		})
	}
}
