package hostnames

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/hostmint/hostmint/targets"
	"github.com/miekg/dns"
)

// slowResolver is a recursive-resolver stand-in on loopback: names under
// hang.test never get an answer, every other name answers 198.41.0.2. It
// records when each name was asked.
type slowResolver struct {
	addr  string
	mu    sync.Mutex
	asked map[string][]time.Time
}

func newSlowResolver(t *testing.T) *slowResolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &slowResolver{addr: pc.LocalAddr().String(), asked: map[string][]time.Time{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		q := req.Question[0]
		r.mu.Lock()
		r.asked[q.Name] = append(r.asked[q.Name], time.Now())
		r.mu.Unlock()
		if strings.HasSuffix(q.Name, ".hang.test.") {
			return
		}
		m := new(dns.Msg)
		m.SetReply(req)
		if q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.IPv4(198, 41, 0, 2)})
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return r
}

// hung lists the first time each hang.test name was asked, and fails the
// test if one was asked twice: a failed resolution waits refreshRetry, and
// one in flight is never started again.
func (r *slowResolver) hung(t *testing.T) []time.Time {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var first []time.Time
	for name, at := range r.asked {
		if !strings.HasSuffix(name, ".hang.test.") {
			continue
		}
		if len(at) > 1 {
			t.Fatalf("%s was asked %d times", name, len(at))
		}
		first = append(first, at[0])
	}
	slices.SortFunc(first, time.Time.Compare)
	return first
}

// One account's hanging targets hold refreshShare workers at a time; the
// other account's due target is refreshed at once.
func TestRefreshTargetsShare(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			store := storagetest.Open(t, d)
			res := newSlowResolver(t)
			var hs []*storage.Hostname
			follow := func(id, account, target string) {
				hs = append(hs, &storage.Hostname{ID: id, AccountID: account, DomainID: "dom", Label: id, Name: id + ".example.test",
					IP: "198.41.0.1", Addrs: "198.41.0.1", Class: "public", Status: storage.StatusLive, Target: target, CreatedAt: 1, UpdatedAt: 1})
			}
			for i := range 4 * refreshShare {
				follow(fmt.Sprintf("slow%d", i), "slow", fmt.Sprintf("t%d.hang.test", i))
			}
			follow("quick", "quick", "app.quick.test")
			_, err := store.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
				for _, a := range []string{"slow", "quick"} {
					if err := tx.InsertAccount(ctx, &storage.Account{ID: a, Name: a, Plan: "team", CreatedAt: 1}); err != nil {
						return err
					}
				}
				if err := tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "example.test", Status: storage.DomainActive, CreatedAt: 1}); err != nil {
					return err
				}
				for _, h := range hs {
					if err := tx.InsertHostname(ctx, h); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s := New(store, Config{Profile: 2, Resolver: &targets.Resolver{Servers: []string{res.addr}, Timeout: timeout}},
				slog.New(slog.DiscardHandler))
			ctx, cancel := context.WithCancel(t.Context())
			stopped := make(chan struct{})
			w := NewWatcher(s, s.cfg.Resolver)
			go func() { w.refreshTargets(ctx); close(stopped) }()
			defer func() { cancel(); <-stopped }()

			t0 := time.Now()
			for {
				h, err := store.Reader().Hostname(t.Context(), "quick")
				if err == nil && h.Addrs == "198.41.0.2" && h.Status == storage.StatusPending {
					break
				}
				if time.Since(t0) > timeout/2 {
					t.Fatalf("the quick account's target was not refreshed within %v: %+v, %v", timeout/2, h, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("the quick account's target refreshed after %v", time.Since(t0).Round(time.Millisecond))

			// The first share of hanging targets must time out before the next start.
			for len(res.hung(t)) <= refreshShare {
				if time.Since(t0) > 2*timeout {
					t.Fatalf("only %d hanging targets were tried in %v", len(res.hung(t)), 2*timeout)
				}
				time.Sleep(20 * time.Millisecond)
			}
			first := res.hung(t)
			if gap := first[refreshShare].Sub(first[0]); gap < timeout*3/4 {
				t.Errorf("hanging target %d started %v after the first: more than %d of one account at once", refreshShare+1, gap, refreshShare)
			}

			// A shutdown does not wait out the resolutions in flight.
			stopAt := time.Now()
			cancel()
			<-stopped
			if took := time.Since(stopAt); took > timeout/2 {
				t.Errorf("stopping took %v with resolutions in flight", took)
			}
			res.hung(t)
		})
	}
}
