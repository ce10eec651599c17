package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// family is the sum of every series of a metric family of sc.
func (sc scrape) family(name string) float64 {
	sum := 0.0
	if f := sc[name]; f != nil {
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// fast_udp, as a resolver and an UPDATE client meet it: once the first
// query has gone through the server, names and missing names are answered
// from the plugin's own sockets (CoreDNS's request counter stands still
// while the plugin's answers grow), exactly as before; what they cannot
// answer (an UPDATE over UDP signed with TSIG) reaches the server with its
// signature checked and its answer signed; after a reload the new
// instance's sockets answer; a change is answered at once.
func TestFastUDP(t *testing.T) {
	t.Parallel()
	o := updateOptions(t, storage.SQLite, 1)
	o.extra = append(o.extra, "fast_udp 2")
	n := spawnMetrics(t, o)
	s := n.server
	acct, key := s.account("business")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	name := h.str("hostname")
	s.resolves(name, dns.TypeA, "198.41.0.4")
	eventually(t, 5*time.Second, func() bool { return strings.Contains(n.p.output(), "fast_udp: "+s.dnsAddr+" answered") },
		"fast_udp never started:\n%s", n.p.output())

	fromBytes(t, n, name, 200)

	// An UPDATE over UDP (knsupdate's default) goes to the server as it
	// came: its signature checked, the answer signed. The new key reloads
	// the server, and the new instance takes the address with its own
	// sockets.
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	if out, ok := s.knsupdate(k, "zone example.org.\nupdate add fast.example.org. 60 A 93.184.215.14"); !ok {
		t.Fatalf("knsupdate over UDP:\n%s", out)
	}
	s.resolves("fast.example.org", dns.TypeA, "93.184.215.14")
	k.secret = strings.Repeat("A", 43) + "="
	if out, ok := s.knsupdate(k, "zone example.org.\nupdate add forged.example.org. 60 A 93.184.215.14"); ok || !strings.Contains(out, "BADSIG") {
		t.Errorf("knsupdate with a wrong secret: ok=%v\n%s", ok, out)
	}
	s.resolves("forged.example.org", dns.TypeA, "NXDOMAIN")
	eventually(t, 5*time.Second, func() bool { return strings.Count(n.p.output(), "fast_udp: "+s.dnsAddr+" answered") >= 2 },
		"fast_udp did not start again after the reload:\n%s", n.p.output())
	fromBytes(t, n, name, 100)

	// A change is answered at once, from the sockets that kept its bytes.
	s.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.6"})
	s.resolves(name, dns.TypeA, "198.41.0.6")
}

// fromBytes sends queries over UDP for name (which answers 198.41.0.4)
// and for missing names, in both cases, with and without EDNS and DO:
// each answered as the plugin answers, and nearly none counted by
// CoreDNS's server (the fast sockets answered them).
func fromBytes(t *testing.T, n *metricsNode, name string, queries int) {
	t.Helper()
	s := n.server
	before := n.scrape(t)
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	for i := range queries {
		m := new(dns.Msg)
		qname, missing := dns.Fqdn(name), i%4 == 3
		if missing {
			qname = fmt.Sprintf("missing-%d.example.org.", i)
		}
		if i%2 == 1 {
			qname = strings.ToUpper(qname[:3]) + qname[3:]
		}
		m.SetQuestion(qname, dns.TypeA)
		do := i%3 == 0
		if i%3 != 2 {
			m.SetEdns0(1232, do)
		}
		r, _, err := c.Exchange(m, s.dnsAddr)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		if r.Id != m.Id || !r.Authoritative || r.Question[0].Name != qname || (r.IsEdns0() != nil) != (i%3 != 2) ||
			do && !r.IsEdns0().Do() {
			t.Fatalf("query %d %s: answer %v", i, qname, r)
		}
		switch {
		case missing && (r.Rcode != dns.RcodeNameError || len(r.Ns) != 1 || r.Ns[0].Header().Rrtype != dns.TypeSOA):
			t.Fatalf("missing %s: %v", qname, r)
		case !missing && strings.Join(addrs(r), ",") != "198.41.0.4":
			t.Fatalf("%s: %v", qname, r)
		}
	}
	after := n.scrape(t)
	answered, _ := after.get("answers_total")
	answeredBefore, _ := before.get("answers_total")
	requests := after.family("coredns_dns_requests_total") - before.family("coredns_dns_requests_total")
	if answered-answeredBefore < float64(queries) || requests > float64(queries)/10 {
		t.Errorf("the plugin answered %v and CoreDNS's server counted %v of %d queries; want all answered, nearly none through the server",
			answered-answeredBefore, requests, queries)
	}
}

// A block whose log plugin must see every query keeps fast_udp off, says
// so, and answers as before.
func TestFastUDPOffBehindLog(t *testing.T) {
	t.Parallel()
	o := options{extra: []string{"fast_udp"}, block: []string{"log"}}
	s, p := spawn(t, o)
	_, key := s.account("free")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("hostname")
	s.resolves(name, dns.TypeA, "198.41.0.4")
	s.resolves("missing.example.org", dns.TypeA, "NXDOMAIN")
	out := p.output()
	if !strings.Contains(out, "fast_udp is off: the log plugin comes before hostname") || strings.Contains(out, "fast_udp: "+s.dnsAddr+" answered") {
		t.Errorf("want fast_udp off because of log:\n%s", out)
	}
	if !strings.Contains(out, name) {
		t.Errorf("the log plugin logged no query for %s", name)
	}
}

// A block without bind, as the container's, listens on the wildcard
// address: fast_udp opens its sockets on each interface address instead
// (bound to it, so an answer leaves from the address its query came to),
// and answers there as on a specific address.
func TestFastUDPWildcard(t *testing.T) {
	t.Parallel()
	o := options{extra: []string{"fast_udp 2"}}
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s, p, _ := spawnEdited(t, o, func(text string) string {
		text = strings.Replace(text, "  bind 127.0.0.1\n", "", 1)
		return strings.Replace(text, "\n  errors\n", "\n  errors\n  prometheus "+metrics+"\n", 1)
	})
	n := &metricsNode{server: s, p: p, url: "http://" + metrics + "/metrics", spawned: time.Now()}
	_, key := s.account("free")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("hostname")
	s.resolves(name, dns.TypeA, "198.41.0.4")
	port := strings.TrimPrefix(s.dnsAddr, "127.0.0.1")
	eventually(t, 5*time.Second, func() bool {
		out := p.output()
		return strings.Contains(out, "fast_udp: "+port+" answered from batches of datagrams on ") && strings.Contains(out, " 127.0.0.1"+port)
	}, "fast_udp never started on the loopback address:\n%s", p.output())
	fromBytes(t, n, name, 100)
}
