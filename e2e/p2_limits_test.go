package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// uncappedTeam makes a team whose active-hostname cap (25 on the default
// team plan) stays out of the way of the rate limits.
func (s *server) uncappedTeam(t testing.TB, domain string) (id, key string) {
	t.Helper()
	id, key = s.team(t, domain)
	s.must(200, "PATCH", "/api/admin/accounts/"+id, s.admin, map[string]any{"cap": 1000})
	return id, key
}

// rateLimited checks a 429 RATE_LIMITED whose message has about and whose
// Retry-After is whole seconds, 1..60; it returns them.
func rateLimited(t testing.TB, r response, about string) int {
	t.Helper()
	if r.status != 429 || r.str("code") != "RATE_LIMITED" {
		t.Fatalf("status %d, want 429 RATE_LIMITED: %s", r.status, r.raw)
	}
	if !strings.Contains(r.str("error"), about) {
		t.Errorf("429 message %q does not mention %s", r.str("error"), about)
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After %q, want whole seconds 1..60", r.header.Get("Retry-After"))
	}
	return secs
}

// listTotal is the list envelope's total for key.
func (s *server) listTotal(key string) int {
	s.t.Helper()
	return int(s.must(200, "GET", "/api/v1/hostnames", key, nil).body["total"].(float64))
}

// More than 30 registrations a minute in a team: 429 with Retry-After; the
// refused one mints nothing, and other teams are not held back.
func TestP2RateLimitRegistrations(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.uncappedTeam(t, "reg.example.net")
		_, other := s.uncappedTeam(t, "other.example.net")

		start := time.Now()
		for i := range 30 {
			s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("10.1.0.%d", i+1)})
		}
		r := s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.1.1.1", "subdomain": "one-too-many"})
		secs := rateLimited(t, r, "registrations")
		// The window frees a slot a minute after the first registration.
		if floor := int(60 - time.Since(start).Seconds()); secs < floor {
			t.Errorf("Retry-After %d, but no slot frees for another %ds", secs, floor)
		}
		if n := s.listTotal(key); n != 30 {
			t.Errorf("total %d after a refused registration, want 30", n)
		}
		s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "10.1.1.1", "subdomain": "one-too-many"})
	})
}

// More than 60 updates a minute in a team, over any of its hostnames: 429
// with Retry-After; the refused one changes nothing. Other teams, the team's
// registrations and its releases are not held back.
func TestP2RateLimitUpdates(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "upd.example.net")
		_, other := s.team(t, "other.example.net")
		var ids []string
		for i := range 2 {
			ids = append(ids, s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("10.2.0.%d", i+1)}).str("id"))
		}

		last := map[string]string{}
		for i := range 60 {
			id, ip := ids[i%2], fmt.Sprintf("10.2.1.%d", i+1)
			s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": ip})
			last[id] = ip
		}
		r := s.do("PUT", "/api/v1/hostnames/"+ids[0], key, map[string]any{"ip": "10.2.2.1"})
		rateLimited(t, r, "updates")
		if g := s.must(200, "GET", "/api/v1/hostnames/"+ids[0], key, nil); g.str("ip") != last[ids[0]] {
			t.Errorf("a refused update changed the address to %s, want %s", g.str("ip"), last[ids[0]])
		}

		x := s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "10.2.3.1"}).str("id")
		s.must(200, "PUT", "/api/v1/hostnames/"+x, other, map[string]any{"ip": "10.2.3.2"})
		s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.2.4.1"})
		s.must(200, "DELETE", "/api/v1/hostnames/"+ids[1], key, nil)
		rateLimited(t, s.do("PUT", "/api/v1/hostnames/"+ids[0], key, map[string]any{"ip": "10.2.2.2"}), "updates")
	})
}

// Repeating the current address is a no-op, and a no-op spends none of
// the team's 60 updates a minute: after 70 of them a real change is
// answered 200, as dyndns2's nochg spends none either.
func TestP2NoopUpdateIsFree(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "noop.example.net")
		id := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("id")
		for range 70 {
			s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.4"})
		}
		if g := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.5"}); g.str("ip") != "198.41.0.5" {
			t.Errorf("a real change after 70 no-ops: %s", g.raw)
		}
	})
}

// The active-hostname cap: the create past it is 429 with Retry-After, and
// a release frees a slot.
func TestP2CapActive(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		team := s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "capped", "plan": "team", "cap": 2}).str("id")
		s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "cap.example.net", "account_id": team})
		key := s.key(t, team, nil)

		first := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.3.0.1"}).str("id")
		s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.3.0.2"})
		rateLimited(t, s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.3.0.3"}), "cap")
		l := s.must(200, "GET", "/api/v1/hostnames", key, nil)
		if l.body["cap"] != float64(2) || l.body["active"] != float64(2) || l.body["total"] != float64(2) {
			t.Errorf("list at the cap: %s", l.raw)
		}

		s.must(200, "DELETE", "/api/v1/hostnames/"+first, key, nil)
		s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.3.0.3"})
		rateLimited(t, s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.3.0.4"}), "cap")
	})
}

// The registration limit holds across nodes: two processes of the binary on
// one PostgreSQL, registering for one team at the same time.
func TestP2RateLimitAcrossNodes(t *testing.T) {
	a, _ := spawn(t, options{dialect: storage.Postgres, profile: 2})
	b, _ := spawn(t, options{dialect: storage.Postgres, profile: 2, dsn: a.dsn})

	// 15 on each node at once: all 30 go through; the 31st, on either
	// node, does not.
	_, key := a.uncappedTeam(t, "nodes.example.net")
	got := registerAtOnce(t, key, map[*server]int{a: 15, b: 15})
	if got[201] != 30 || len(got) != 1 {
		t.Fatalf("30 registrations over two nodes answered %v, want 30 × 201", got)
	}
	for _, n := range []*server{a, b} {
		rateLimited(t, n.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.4.1.1"}), "registrations")
	}

	// 20 on each node at once: exactly 30 go through, however they interleave.
	_, key = a.uncappedTeam(t, "burst.example.net")
	got = registerAtOnce(t, key, map[*server]int{a: 20, b: 20})
	if got[201] != 30 || got[429] != 10 || len(got) != 2 {
		t.Fatalf("40 registrations over two nodes answered %v, want 30 × 201 and 10 × 429", got)
	}
	for _, n := range []*server{a, b} {
		if total := n.listTotal(key); total != 30 {
			t.Errorf("node %s lists %d hostnames, want 30", n.api, total)
		}
	}
}

// registerAtOnce sends count registrations to each node, all at once, and
// counts the answers by status.
func registerAtOnce(t *testing.T, key string, count map[*server]int) map[int]int {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  = map[int]int{}
		next int
	)
	for n, c := range count {
		for range c {
			next++
			body, _ := json.Marshal(map[string]any{"ip": fmt.Sprintf("10.4.0.%d", next)})
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", n.api+"/api/v1/hostnames", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("POST to %s: %v", n.api, err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				got[resp.StatusCode]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return got
}
