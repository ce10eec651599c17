package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// BenchmarkStandby measures a read-only node on a real hot standby on this
// machine, for the README's performance table:
//
//	go test ./e2e -run '^$' -bench Standby -benchtime 1x -timeout 30m
//
// - startup_s: a read-only node's start on the standby until its index of
// HOSTMINT_BENCH_NAMES (default 1 000 000) names is loaded;
// - lag_p50_ms, lag_p99_ms, lag_max_ms: from the writer's API answering
// 200 to an update to the read-only node answering the new address, over
// 1 000 updates;
// - recovery_ms: from `pg_ctl promote` (the primary killed under load) to
// the writer's first create acknowledged after it; write_gap_ms: from the
// kill to that create.
func BenchmarkStandby(b *testing.B) {
	names := 1_000_000
	if v := os.Getenv("HOSTMINT_BENCH_NAMES"); v != "" {
		names, _ = strconv.Atoi(v)
	}
	c := newPGCluster(b)
	c.createDB(b, "hostmint")
	w := start(b, options{dialect: storage.Postgres, dsn: c.multiHostDSN("hostmint")})
	acct, key := w.account("business")
	w.must(200, "PATCH", "/api/admin/accounts/"+acct, w.admin, map[string]any{"cap": names + 100_000})
	seeded := time.Now()
	c.seedNames(b, "hostmint", acct, "s", names)
	c.waitStandbyCaughtUp(b)
	b.Logf("%d names seeded on the primary and replayed on the standby in %v", names, time.Since(seeded).Round(time.Millisecond))

	began := time.Now()
	r := start(b, options{dialect: storage.Postgres, dsn: c.standbyDSN("hostmint") + " readonly", dir: w.dir,
		extra: []string{"feed_poll 100ms"}}) // a read-only node's default (the harness sets 200ms)
	startup := time.Since(began)
	r.resolves(fmt.Sprintf("s%d.example.org", names), dns.TypeA, seededAddr(names))

	lags := make([]time.Duration, 1000)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(lags); i = int(next.Add(1)) - 1 {
				// At a random moment of the poll: updates that waited for
				// the last one would all land just after it.
				time.Sleep(time.Duration(rand.Int64N(int64(150 * time.Millisecond))))
				id := i*997%names + 1
				ip := fmt.Sprintf("12.%d.%d.%d", i>>8&255, i&255, id&255)
				w.must(200, "PUT", fmt.Sprintf("/api/v1/hostnames/h_s%d", id), key, map[string]any{"ip": ip})
				done := time.Now()
				for !slices.Contains(addrs(r.query(fmt.Sprintf("s%d.example.org", id), dns.TypeA, "udp")), ip) {
					if time.Since(done) > 10*time.Second {
						b.Fatalf("update %d never reached the read-only node", i)
					}
					time.Sleep(time.Millisecond)
				}
				lags[i] = time.Since(done)
			}
		})
	}
	wg.Wait()
	slices.Sort(lags)

	// The failover: creates under load, the primary killed, the standby
	// promoted; the writer's first acknowledged create after it.
	var acked atomic.Int64
	var firstAfter atomic.Int64 // Unix ns of the first 201 to an attempt sent once the primary was dead
	var killed atomic.Int64
	stop := make(chan struct{})
	var load sync.WaitGroup
	for n := range 4 {
		load.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := map[string]any{"ip": fmt.Sprintf("13.0.%d.%d", n, i&255)}
				k := fmt.Sprintf("fo-%d-%d", n, i)
				for {
					sent := time.Now().UnixNano()
					resp := w.doWith("POST", "/api/v1/hostnames", key, body, idem(k))
					if resp.status == 201 {
						acked.Add(1)
						if k := killed.Load(); k != 0 && sent > k {
							firstAfter.CompareAndSwap(0, time.Now().UnixNano())
						}
						break
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	killing := time.Now()
	c.killPrimary(b)
	killed.Store(time.Now().UnixNano()) // attempts sent from now on can only commit on the new primary
	promoting := time.Now()
	c.promote(b)
	promoteTook := time.Since(promoting)
	deadline := time.Now().Add(60 * time.Second)
	for firstAfter.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	load.Wait()
	if firstAfter.Load() == 0 {
		b.Fatal("the writer took no create within 60 s of the promotion")
	}
	gap := time.Duration(firstAfter.Load() - killing.UnixNano())
	recovery := time.Duration(firstAfter.Load() - promoting.UnixNano())

	b.ReportMetric(float64(names), "names")
	b.ReportMetric(startup.Seconds(), "startup_s")
	b.ReportMetric(ms(lags[len(lags)/2]), "lag_p50_ms")
	b.ReportMetric(ms(lags[len(lags)*99/100]), "lag_p99_ms")
	b.ReportMetric(ms(lags[len(lags)-1]), "lag_max_ms")
	b.ReportMetric(ms(recovery), "recovery_ms")
	b.ReportMetric(ms(gap), "write_gap_ms")
	b.Logf("read-only start-up on %d names %v; lag p50 %v p99 %v max %v; the writer's first create %v after `pg_ctl promote` began "+
		"(which took %v), %v after the primary was killed (%d creates acknowledged)",
		names, startup.Round(time.Millisecond), lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1],
		recovery.Round(time.Millisecond), promoteTook.Round(time.Millisecond), gap.Round(time.Millisecond), acked.Load())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
