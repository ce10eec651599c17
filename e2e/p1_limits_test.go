package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// [P1] an account's creates are limited by its plan: a free account may
// create and release 100 names in a row, and the 101st create gets 429
// with Retry-After and mints nothing. Another account is not held back.
func TestP1RateLimitCreates(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("free")
		_, other := s.account("free")
		for i := range 100 {
			id := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.1.%d", i+1)}).str("id")
			s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil)
		}
		secs := rateLimited(t, s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.2.1"}), "creates")
		if secs > 36 { // the bucket refills one create every 36 s
			t.Errorf("Retry-After %d, want at most 36", secs)
		}
		if hs, _ := s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any); len(hs) != 0 {
			t.Errorf("%d hostnames listed after a refused create, want 0", len(hs))
		}
		s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "198.41.2.1"})
	})
}

// tally counts answers at once: accepted (want), refused 429 RATE_LIMITED,
// and anything else, which fails the test.
type tally struct {
	mu               sync.Mutex
	ok, refused, bad int
}

func (c *tally) add(t *testing.T, want int, r response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case r.status == want:
		c.ok++
	case r.status == 429 && r.str("code") == "RATE_LIMITED":
		c.refused++
	default:
		c.bad++
		t.Errorf("%d %s, want %d or 429", r.status, r.raw, want)
	}
}

// [P1] every door's updates of an account draw on one allowance (600 an
// hour on the free plan): PUT, renew and dyndns2 alike. Past it each is
// refused and changes nothing; 64 callers at once get exactly the
// allowance, never one more.
func TestP1RateLimitUpdates(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("free")
		var ids, names []string
		for i := range 4 {
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.3.%d", i+1)})
			ids, names = append(ids, h.str("id")), append(names, h.str("hostname"))
		}
		s.must(200, "POST", "/api/v1/hostnames/"+ids[0]+"/renew", key, nil)
		first := time.Now() // the bucket's first update: it refills one every 6 s from here
		if a := s.dyn(t, "/nic/update", key, "hostname="+names[1]+"&myip=198.41.4.1", nil); a.body != "good 198.41.4.1" {
			t.Fatalf("dyndns2: %d %q", a.status, a.body)
		}
		var (
			wg  sync.WaitGroup
			got tally
		)
		for c := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					got.add(t, 200, s.do("PUT", "/api/v1/hostnames/"+ids[c%4], key, map[string]any{"ip": fmt.Sprintf("198.41.%d.%d", 10+c, i+1)}))
				}
			}()
		}
		wg.Wait()
		ok, refused, bad := got.ok, got.refused, got.bad
		refills := int(time.Since(first) / (6 * time.Second)) // on a slow machine
		if ok < 598 || ok > 598+refills || ok+refused != 640 || bad != 0 {
			t.Errorf("640 updates at once after 2: %d accepted, %d refused, %d failed; want 598 (+ %d refilled at most) and the rest refused",
				ok, refused, bad, refills)
		}
		spendRefills(t, s, key, ids[3], first)
		before := s.must(200, "GET", "/api/v1/hostnames/"+ids[2], key, nil).str("ip")
		rateLimited(t, s.do("PUT", "/api/v1/hostnames/"+ids[2], key, map[string]any{"ip": "198.41.5.1"}), "updates")
		rateLimited(t, s.do("POST", "/api/v1/hostnames/"+ids[2]+"/renew", key, nil), "updates")
		if a := s.dyn(t, "/nic/update", key, "hostname="+names[2]+"&myip=198.41.5.1", nil); a.body != "abuse" {
			t.Errorf("dyndns2 past the allowance: %d %q, want abuse", a.status, a.body)
		}
		if after := s.must(200, "GET", "/api/v1/hostnames/"+ids[2], key, nil).str("ip"); after != before {
			t.Errorf("ip %s after refused updates, want %s", after, before)
		}
	})
}

// The cap is exact however many create at once: 64 concurrent creates
// into a free account (cap 25) mint exactly 25 names, in profile 1 and in
// a profile-2 team (cap 20); the rest get 429. Concurrent creates of one
// account share their commits, and a batch never lets one more through.
func TestCapExactUnderConcurrency(t *testing.T) {
	for _, profile := range []int{1, 2} {
		t.Run(fmt.Sprintf("profile %d", profile), func(t *testing.T) {
			eachDialect(t, options{profile: profile}, func(t *testing.T, s *server) {
				var key string
				want := 25
				if profile == 1 {
					_, key = s.account("free")
				} else {
					var id string
					id, key = s.team(t, "cap.example.net")
					want = 20
					s.must(200, "PATCH", "/api/admin/accounts/"+id, s.admin, map[string]any{"cap": want})
				}
				var (
					wg  sync.WaitGroup
					got tally
				)
				for c := range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						body := map[string]any{"ip": fmt.Sprintf("198.41.7.%d", c+1)}
						if profile == 2 {
							body["subdomain"] = fmt.Sprintf("cap%d", c)
						}
						got.add(t, 201, s.do("POST", "/api/v1/hostnames", key, body))
					}()
				}
				wg.Wait()
				ok, refused, bad := got.ok, got.refused, got.bad
				if ok != want || refused != 64-want || bad != 0 {
					t.Errorf("64 creates at once: %d minted, %d refused, %d failed; want %d and %d", ok, refused, bad, want, 64-want)
				}
				if hs, _ := s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any); len(hs) != want {
					t.Errorf("%d hostnames listed, want %d", len(hs), want)
				}
			})
		})
	}
}

// spendRefills spends what the updates bucket (one every 6 s from first)
// refilled since the burst, and returns once an update was refused with
// over a second left before the next refill: what the test sends next must
// be refused too. On a slow machine the burst can end just before a refill.
func spendRefills(t *testing.T, s *server, key, id string, first time.Time) {
	t.Helper()
	const every = 6 * time.Second
	nextRefill := func() time.Time { return first.Add((time.Since(first)/every + 1) * every) }
	for i := range 10 {
		next := nextRefill()
		if wait := time.Until(next); wait < 2*time.Second {
			time.Sleep(wait + 100*time.Millisecond)
			next = nextRefill()
		}
		r := s.do("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": fmt.Sprintf("198.41.6.%d", i+1)})
		switch {
		case r.status == 429 && time.Until(next) > time.Second:
			return
		case r.status != 429 && r.status != 200:
			t.Fatalf("an update spending a refill: %d %s", r.status, r.raw)
		}
	}
	t.Fatal("the updates bucket never emptied")
}
