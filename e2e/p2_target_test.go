package e2e

import (
	"fmt"
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

// platformDNS is a real recursive-resolver stand-in on loopback: a miekg/dns
// server over UDP whose answers a test changes while the service follows
// them. Names it does not know answer NXDOMAIN; a name set with no address
// answers NOERROR with no data; a name marked failing answers SERVFAIL; a
// name marked hanging gets no answer at all.
type platformDNS struct {
	addr string
	srv  *dns.Server

	mu      sync.Mutex
	ttl     uint32
	answers map[string][]string // FQDN, lowercase -> addresses
	failing map[string]bool
	hanging map[string]bool
	slowed  map[string]time.Duration // answered this late
	queries map[string]int           // A and AAAA questions seen per name
}

func newPlatformDNS(t *testing.T, ttl uint32) *platformDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &platformDNS{
		addr: pc.LocalAddr().String(), ttl: ttl,
		answers: map[string][]string{}, failing: map[string]bool{}, hanging: map[string]bool{}, slowed: map[string]time.Duration{},
		queries: map[string]int{},
	}
	started := make(chan struct{})
	p.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(p.serve), NotifyStartedFunc: func() { close(started) }}
	go p.srv.ActivateAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the platform resolver did not start")
	}
	t.Cleanup(func() { p.srv.Shutdown() })
	return p
}

// set makes name answer addrs (none: NOERROR without data).
func (p *platformDNS) set(name string, addrs ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := strings.ToLower(dns.Fqdn(name))
	p.answers[n] = addrs
	delete(p.failing, n)
	delete(p.hanging, n)
}

// forget makes name answer NXDOMAIN.
func (p *platformDNS) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.answers, strings.ToLower(dns.Fqdn(name)))
}

// fail makes name answer SERVFAIL.
func (p *platformDNS) fail(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing[strings.ToLower(dns.Fqdn(name))] = true
}

// hang makes name's questions go unanswered, as a resolver whose upstream
// never answers.
func (p *platformDNS) hang(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hanging[strings.ToLower(dns.Fqdn(name))] = true
}

// slow makes name's answers come d late, as a slow upstream's.
func (p *platformDNS) slow(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slowed[strings.ToLower(dns.Fqdn(name))] = d
}

// asked is how many A and AAAA questions name has had.
func (p *platformDNS) asked(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queries[strings.ToLower(dns.Fqdn(name))]
}

func (p *platformDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.RecursionAvailable = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	p.mu.Lock()
	addrs, known := p.answers[name]
	failing, hanging, ttl, late := p.failing[name], p.hanging[name], p.ttl, p.slowed[name]
	if q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA {
		p.queries[name]++
	}
	p.mu.Unlock()
	time.Sleep(late)
	switch {
	case hanging:
		return
	case failing:
		m.Rcode = dns.RcodeServerFailure
	case !known:
		m.Rcode = dns.RcodeNameError
	default:
		for _, a := range addrs {
			ip := net.ParseIP(a)
			hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: ttl}
			switch {
			case ip.To4() != nil && q.Qtype == dns.TypeA:
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: ip.To4()})
			case ip.To4() == nil && q.Qtype == dns.TypeAAAA:
				hdr.Rrtype = dns.TypeAAAA
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: ip})
			}
		}
	}
	w.WriteMsg(m)
}

// holdsFor fails the test if cond stops holding at any poll during d.
func holdsFor(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !cond() {
			t.Fatalf(msg, args...)
		}
	}
}

// answersNow reports whether name answers A and AAAA with exactly v4 and v6
// over UDP and TCP right now.
func (s *server) answersNow(name string, v4, v6 []string) bool {
	s.t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		for qt, want := range map[uint16][]string{dns.TypeA: v4, dns.TypeAAAA: v6} {
			if got := addrs(s.query(name, qt, proto)); !slices.Equal(got, want) {
				return false
			}
		}
	}
	return true
}

// noCNAME fails unless every answer for name carries plain addresses and no
// CNAME, whatever is asked.
func (s *server) noCNAME(t testing.TB, name string) {
	t.Helper()
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeANY} {
		for _, proto := range []string{"udp", "tcp"} {
			m := s.query(name, qt, proto)
			if m.Rcode != dns.RcodeSuccess {
				t.Fatalf("%s %s over %s: %s", name, dns.TypeToString[qt], proto, dns.RcodeToString[m.Rcode])
			}
			for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
				for _, rr := range sec {
					if rr.Header().Rrtype == dns.TypeCNAME {
						t.Fatalf("%s %s over %s carries a CNAME: %v", name, dns.TypeToString[qt], proto, rr)
					}
				}
			}
			if (qt == dns.TypeCNAME) != (len(m.Answer) == 0) {
				t.Fatalf("%s %s over %s: answer %v", name, dns.TypeToString[qt], proto, m.Answer)
			}
		}
	}
}

// targetServer starts a profile-2 server that resolves targets through p,
// with a team on domain and a key for it.
func targetServer(t *testing.T, d storage.Dialect, p *platformDNS, domain string) (s *server, key string) {
	t.Helper()
	s = start(t, options{dialect: d, profile: 2, extra: []string{"resolver " + p.addr}})
	_, key = s.team(t, domain)
	return s, key
}

// A hostname following a target publishes the target's A and AAAA records
// (never a CNAME), follows the resolver within the TTL, refuses private
// answers by keeping its last public addresses, and leaves its target when
// given an ip.
func TestP2TargetFollows(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			// TTL 1 s: the service still waits targets.MinTTL between refreshes.
			p := newPlatformDNS(t, 1)
			const app = "app.platform.test"
			p.set(app, "198.41.0.10", "2001:500:2::10")
			s, key := targetServer(t, d, p, "follow.example.net")

			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
			id, name := h.str("id"), h.str("hostname")
			s.live(t, key, id)

			// Case and a trailing dot do not matter; the PUT answers pending.
			r := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": "APP.Platform.Test."})
			if r.str("target") != app || r.str("status") != "pending" || r.str("ip") != "198.41.0.10" || r.str("record_type") != "A" || r.str("hostname") != name {
				t.Fatalf("PUT target: %s", r.raw)
			}
			t0 := time.Now()
			asked0 := p.asked(app)
			s.resolves(name, dns.TypeA, "198.41.0.10")
			s.resolves(name, dns.TypeAAAA, "2001:500:2::10")
			s.noCNAME(t, name)
			g := s.live(t, key, id)
			if g.str("target") != app || g.str("ip") != "198.41.0.10" {
				t.Fatalf("GET after PUT target: %s", g.raw)
			}
			if l := s.must(200, "GET", "/api/v1/hostnames", key, nil); !strings.Contains(string(l.raw), `"target":"`+app+`"`) {
				t.Fatalf("the list does not show the target: %s", l.raw)
			}

			// The same target again, answering the same: a no-op.
			if r := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": app}); r.str("status") != "live" {
				t.Fatalf("repeating the target rewrote the hostname: %s", r.raw)
			}

			// The resolver's answer changes: DNS follows within the TTL.
			p.set(app, "198.41.0.12", "198.41.0.11", "2001:500:2::11")
			changed := time.Now()
			eventually(t, 12*time.Second, func() bool {
				return s.answersNow(name, []string{"198.41.0.11", "198.41.0.12"}, []string{"2001:500:2::11"})
			}, "DNS for %s did not follow the target's new answer within 12s", name)
			t.Logf("followed a changed target after %v (refresh interval at least %v)", time.Since(changed).Round(10*time.Millisecond), targets.MinTTL)
			s.noCNAME(t, name)
			if g := s.live(t, key, id); g.str("ip") != "198.41.0.11" || g.str("target") != app {
				t.Fatalf("GET after the target moved: %s", g.raw)
			}

			// The target turns private: refused at the next refresh, the
			// hostname keeps its last public addresses.
			p.set(app, "10.0.0.7", "fd00::7")
			n := p.asked(app)
			eventually(t, 12*time.Second, func() bool { return p.asked(app) >= n+2 },
				"the target was not resolved again within 12s")
			holdsFor(t, 2*time.Second, func() bool {
				return s.answersNow(name, []string{"198.41.0.11", "198.41.0.12"}, []string{"2001:500:2::11"})
			}, "%s stopped serving its last public addresses once the target turned private", name)
			if g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); g.str("status") != "live" || g.str("ip") != "198.41.0.11" || g.str("target") != app {
				t.Fatalf("GET while the target is private: %s", g.raw)
			}

			// Partly private: no private address is ever published. Whether
			// the public part is taken or the whole answer refused is left
			// open by the spec; either way nothing private gets through.
			p.set(app, "10.0.0.13", "198.41.0.13", "fd00::13", "2001:500:2::13")
			n = p.asked(app)
			eventually(t, 12*time.Second, func() bool { return p.asked(app) >= n+2 },
				"the target was not resolved again within 12s")
			allowed := map[uint16][]string{dns.TypeA: {"198.41.0.11,198.41.0.12", "198.41.0.13"}, dns.TypeAAAA: {"2001:500:2::11", "2001:500:2::13"}}
			holdsFor(t, 2*time.Second, func() bool {
				for qt, ok := range allowed {
					for _, proto := range []string{"udp", "tcp"} {
						if got := strings.Join(addrs(s.query(name, qt, proto)), ","); !slices.Contains(ok, got) {
							t.Logf("%s %s over %s: %s", name, dns.TypeToString[qt], proto, got)
							return false
						}
					}
				}
				return true
			}, "%s published something other than public addresses when the target turned partly private", name)
			t.Logf("partly private target: A now %v", addrs(s.query(name, dns.TypeA, "udp")))
			s.live(t, key, id)

			// The refreshes kept to the clamped TTL, not the resolver's 1 s.
			elapsed := time.Since(t0)
			refreshes := p.asked(app) - asked0
			t.Logf("the resolver was asked %d times in %v", refreshes, elapsed.Round(10*time.Millisecond))
			if max := 2 * (int(elapsed/targets.MinTTL) + 3); refreshes > max {
				t.Errorf("the resolver was asked %d times in %v (TTL clamped to %v allows about %d)", refreshes, elapsed, targets.MinTTL, max)
			}

			// An ip takes the hostname off its target.
			r = s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.50"})
			if _, ok := r.body["target"]; ok || r.str("ip") != "198.41.0.50" {
				t.Fatalf("PUT ip on a hostname with a target: %s", r.raw)
			}
			s.resolves(name, dns.TypeA, "198.41.0.50")
			s.resolves(name, dns.TypeAAAA)
			if g := s.live(t, key, id); g.body["target"] != nil || g.str("ip") != "198.41.0.50" {
				t.Fatalf("GET after PUT ip: %s", g.raw)
			}
			p.set(app, "198.41.0.60", "2001:500:2::60")
			n = p.asked(app)
			holdsFor(t, targets.MinTTL+2*time.Second, func() bool {
				return s.answersNow(name, []string{"198.41.0.50"}, []string{})
			}, "%s followed its old target after PUT ip", name)
			if p.asked(app) != n {
				t.Errorf("the old target was resolved %d more times after PUT ip", p.asked(app)-n)
			}
			if g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); g.body["target"] != nil || g.str("ip") != "198.41.0.50" || g.str("status") != "live" {
				t.Fatalf("GET long after PUT ip: %s", g.raw)
			}
		})
	}
}

// A target that stops resolving (NXDOMAIN) or fails (SERVFAIL) at a refresh
// leaves the hostname on its last addresses.
func TestP2TargetRefreshFailures(t *testing.T) {
	t.Parallel()
	p := newPlatformDNS(t, 1)
	s, key := targetServer(t, storage.SQLite, p, "failing.example.net")
	for i, mode := range []string{"nxdomain", "servfail"} {
		target := mode + ".platform.test"
		v4, v6 := fmt.Sprintf("198.41.0.%d", 70+i), fmt.Sprintf("2001:500:2::%d", 70+i)
		p.set(target, v4, v6)
		id := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("id")
		name := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": target}).str("hostname")
		s.resolves(name, dns.TypeA, v4)
		s.resolves(name, dns.TypeAAAA, v6)
		s.live(t, key, id)
		if mode == "nxdomain" {
			p.forget(target)
		} else {
			p.fail(target)
		}
		n := p.asked(target)
		eventually(t, 12*time.Second, func() bool { return p.asked(target) > n }, "%s target was not resolved again", mode)
		holdsFor(t, 1500*time.Millisecond, func() bool { return s.answersNow(name, []string{v4}, []string{v6}) },
			"%s: the hostname dropped its last addresses when its target failed", mode)
		if g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); g.str("status") != "live" || g.str("ip") != v4 || g.str("target") != target {
			t.Fatalf("%s: GET after a failed refresh: %s", mode, g.raw)
		}
	}
}

// Every way a target PUT can be refused, each leaving the hostname as it was.
func TestP2TargetErrors(t *testing.T) {
	t.Parallel()
	p := newPlatformDNS(t, 30)
	p.set("app.platform.test", "198.41.0.10", "2001:500:2::10")
	p.set("internal.platform.test", "10.0.0.1", "fd00::1")
	p.set("empty.platform.test") // exists, no A or AAAA
	p.fail("broken.platform.test")
	s, key := targetServer(t, storage.SQLite, p, "errors.example.net")

	pub := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	priv := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.1.2.3"})
	s.live(t, key, pub.str("id"))
	s.live(t, key, priv.str("id"))
	pubPath, privPath := "/api/v1/hostnames/"+pub.str("id"), "/api/v1/hostnames/"+priv.str("id")

	tests := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"both ip and target", pubPath, map[string]any{"ip": "198.41.0.5", "target": "app.platform.test"}, 400, "BAD_REQUEST"},
		{"neither ip nor target", pubPath, map[string]any{}, 400, "BAD_REQUEST"},
		{"both null", pubPath, `{"ip":null,"target":null}`, 400, "BAD_REQUEST"},
		{"target does not exist", pubPath, map[string]any{"target": "gone.platform.test"}, 400, "BAD_REQUEST"},
		{"target without addresses", pubPath, map[string]any{"target": "empty.platform.test"}, 400, "BAD_REQUEST"},
		{"target only private for a public hostname", pubPath, map[string]any{"target": "internal.platform.test"}, 409, "CONFLICT"},
		{"target only public for a private hostname", privPath, map[string]any{"target": "app.platform.test"}, 409, "CONFLICT"},
		{"target empty", pubPath, map[string]any{"target": ""}, 400, "BAD_REQUEST"},
		{"target with a space", pubPath, map[string]any{"target": "app platform.test"}, 400, "BAD_REQUEST"},
		{"target of one label", pubPath, map[string]any{"target": "localhost"}, 400, "BAD_REQUEST"},
		{"target with a leading hyphen", pubPath, map[string]any{"target": "-app.platform.test"}, 400, "BAD_REQUEST"},
		{"target with an empty label", pubPath, map[string]any{"target": "app..platform.test"}, 400, "BAD_REQUEST"},
		{"target with an underscore", pubPath, map[string]any{"target": "_app.platform.test"}, 400, "BAD_REQUEST"},
		{"target a URL", pubPath, map[string]any{"target": "https://app.platform.test/"}, 400, "BAD_REQUEST"},
		{"target too long", pubPath, map[string]any{"target": strings.Repeat("a.", 120) + "test"}, 400, "BAD_REQUEST"},
		{"target not a string", pubPath, `{"target":17}`, 400, "BAD_REQUEST"},
		{"target of an unknown hostname", "/api/v1/hostnames/hn_nothere", map[string]any{"target": "app.platform.test"}, 404, "NOT_FOUND"},
		// Not described by the spec: a resolver that fails is a transient
		// condition for this service.
		{"target whose resolution fails", pubPath, map[string]any{"target": "broken.platform.test"}, 503, "SERVICE_UNAVAILABLE"},
	}
	for _, tc := range tests {
		r := s.do("PUT", tc.path, key, tc.body)
		if r.status != tc.status || r.str("code") != tc.code || r.str("error") == "" {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.raw, tc.status, tc.code)
		}
	}
	for _, h := range []response{pub, priv} {
		g := s.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil)
		if g.body["target"] != nil || g.str("ip") != h.str("ip") || g.str("status") != "live" {
			t.Errorf("a refused PUT changed %s: %s", h.str("hostname"), g.raw)
		}
		s.resolves(h.str("hostname"), dns.TypeA, h.str("ip"))
	}

	// Within its class a private hostname may follow a private target.
	r := s.must(200, "PUT", privPath, key, map[string]any{"target": "internal.platform.test"})
	if r.str("target") != "internal.platform.test" || r.str("ip") != "10.0.0.1" {
		t.Fatalf("private hostname, private target: %s", r.raw)
	}
	s.resolves(priv.str("hostname"), dns.TypeA, "10.0.0.1")
	s.resolves(priv.str("hostname"), dns.TypeAAAA, "fd00::1")
	s.live(t, key, priv.str("id"))
}

// Without a resolver line, targets are not available: 501; ip still works.
func TestP2TargetWithoutResolver(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	_, key := s.team(t, "noresolver.example.net")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	path := "/api/v1/hostnames/" + h.str("id")
	s.live(t, key, h.str("id"))
	if r := s.must(501, "PUT", path, key, map[string]any{"target": "app.platform.test"}); r.str("code") != "NOT_IMPLEMENTED" {
		t.Fatalf("target without a resolver: %s", r.raw)
	}
	// Request errors are still reported as such.
	s.must(400, "PUT", path, key, map[string]any{"target": "app.platform.test", "ip": "198.41.0.5"})
	s.must(400, "PUT", path, key, map[string]any{"target": "not a name"})
	if g := s.must(200, "GET", path, key, nil); g.body["target"] != nil || g.str("ip") != "198.41.0.4" {
		t.Fatalf("a refused target changed the hostname: %s", g.raw)
	}
	s.must(200, "PUT", path, key, map[string]any{"ip": "198.41.0.5"})
	s.resolves(h.str("hostname"), dns.TypeA, "198.41.0.5")
}

// Profile 1 has no target field, even with a resolver configured.
func TestP2TargetRefusedInProfile1(t *testing.T) {
	t.Parallel()
	p := newPlatformDNS(t, 30)
	p.set("app.platform.test", "198.41.0.10")
	s := start(t, options{extra: []string{"resolver " + p.addr}})
	_, key := s.account("pro")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	path := "/api/v1/hostnames/" + h.str("id")
	for _, body := range []map[string]any{
		{"target": "app.platform.test"},
		{"ip": "198.41.0.5", "target": "app.platform.test"},
	} {
		if r := s.must(400, "PUT", path, key, body); r.str("code") != "BAD_REQUEST" {
			t.Fatalf("profile 1 target %v: %s", body, r.raw)
		}
	}
	if p.asked("app.platform.test") != 0 {
		t.Error("profile 1 resolved a target")
	}
	g := s.must(200, "GET", path, key, nil)
	if _, ok := g.body["target"]; ok || g.str("ip") != "198.41.0.4" {
		t.Fatalf("GET after refused targets: %s", g.raw)
	}
	s.resolves(h.str("hostname"), dns.TypeA, "198.41.0.4")
}
