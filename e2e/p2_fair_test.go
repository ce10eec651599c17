package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/hostmint/hostmint/targets"
)

// liveWithin waits up to d for the hostname to read live and returns how
// long that took.
func (s *server) liveWithin(t *testing.T, key, id string, d time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	for s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil).str("status") != "live" {
		if time.Since(t0) > d {
			t.Fatalf("hostname %s still pending after %v", id, time.Since(t0).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(t0)
}

// One team's targets that stop answering hold back no other team: with 30
// of team A's targets hanging at the resolver, team B's new hostname reads
// live within 2 s, as it does once it follows a target, and B's target is
// still followed at its TTL. A's targets are not asked again in a loop.
func TestP2TargetFairness(t *testing.T) {
	const hung, budget = 30, 2 * time.Second
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			p := newPlatformDNS(t, 1) // clamped to targets.MinTTL
			s := start(t, options{dialect: d, profile: 2, extra: []string{"resolver " + p.addr}})
			_, keyA := s.uncappedTeam(t, "slow.example.net")
			_, keyB := s.team(t, "quick.example.net")

			slow := make([]string, hung)
			for i := range slow {
				slow[i] = fmt.Sprintf("t%d.slow.platform.test", i)
				p.set(slow[i], fmt.Sprintf("198.41.1.%d", i+1))
				id := s.must(201, "POST", "/api/v1/hostnames", keyA, map[string]any{"ip": "198.41.0.4"}).str("id")
				s.must(200, "PUT", "/api/v1/hostnames/"+id, keyA, map[string]any{"target": slow[i]})
			}
			before := map[string]int{}
			for _, target := range slow {
				p.hang(target)
				before[target] = p.asked(target)
			}
			hungAt := time.Now()
			hanging := func() (n int) {
				for _, target := range slow {
					if p.asked(target) > before[target] {
						n++
					}
				}
				return n
			}
			// A's targets come due targets.MinTTL after their PUT.
			eventually(t, 3*targets.MinTTL, func() bool { return hanging() >= 4 },
				"team A's targets were not resolved again after they stopped answering")
			t.Logf("%d of team A's targets hanging at the resolver", hanging())

			// B's new hostname goes live.
			h := s.must(201, "POST", "/api/v1/hostnames", keyB, map[string]any{"ip": "198.41.0.5"})
			id, name := h.str("id"), h.str("hostname")
			if h.str("status") != "pending" {
				t.Fatalf("create: %s", h.raw)
			}
			took := s.liveWithin(t, keyB, id, budget)
			t.Logf("team B's new hostname live after %v (%d of team A's targets hanging)", took.Round(time.Millisecond), hanging())

			// B follows a target that answers: live again.
			const app = "app.quick.platform.test"
			p.set(app, "198.41.2.1")
			if r := s.must(200, "PUT", "/api/v1/hostnames/"+id, keyB, map[string]any{"target": app}); r.str("status") != "pending" {
				t.Fatalf("PUT target: %s", r.raw)
			}
			took = s.liveWithin(t, keyB, id, budget)
			t.Logf("team B's hostname live on its target after %v", took.Round(time.Millisecond))

			// B's target moves: followed within its TTL and a refresh tick.
			p.set(app, "198.41.2.2")
			moved := time.Now()
			eventually(t, targets.MinTTL+budget, func() bool { return s.answersNow(name, []string{"198.41.2.2"}, nil) },
				"%s did not follow its target within %v while team A's targets hung", name, targets.MinTTL+budget)
			s.liveWithin(t, keyB, id, budget)
			t.Logf("team B's hostname followed its target after %v (TTL %v)", time.Since(moved).Round(time.Millisecond), targets.MinTTL)

			// A failed resolution waits before the next; one in flight is
			// not started again. Each attempt asks A only (it times out).
			allowed := 1 + int(time.Since(hungAt)/(30*time.Second))
			for _, target := range slow {
				if n := p.asked(target) - before[target]; n > allowed {
					t.Errorf("%s was asked %d times in %v after it stopped answering", target, n, time.Since(hungAt).Round(time.Second))
				}
			}
			t.Logf("%d of team A's targets tried in %v", hanging(), time.Since(hungAt).Round(time.Millisecond))
		})
	}
}
