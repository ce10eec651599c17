package e2e

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// startCatalogSecondary runs kind ("knot" or "bind") configured with
// catalog.invalid alone, transferred from primary with the test key: it
// learns every member zone from the catalog.
func startCatalogSecondary(t *testing.T, kind string, port int, primary string) *secondary {
	t.Helper()
	dir := t.TempDir()
	host, pport, _ := net.SplitHostPort(primary)
	if kind == "knot" {
		return startKnot(t, dir, port, knotConf(port, dir, host, pport, `  - id: member
    storage: `+dir+`
    master: primary
    acl: notify
zone:
  - domain: catalog.invalid
    master: primary
    acl: notify
    catalog-role: interpret
    catalog-template: member
`))
	}
	return startBind(t, dir, port, bindConf(port, dir, host, pport, fmt.Sprintf(`    catalog-zones {
        zone "catalog.invalid" default-primaries port %[2]s { %[1]s key "xfr.key"; } in-memory yes min-update-interval 1;
    };
`, host, pport), fmt.Sprintf(`zone "catalog.invalid" {
    type secondary;
    primaries port %[2]s { %[1]s key "xfr.key"; };
    file "%[3]s/catalog.db";
};
`, host, pport, dir)))
}

// Knot and BIND configured with the catalog alone serve every domain, one
// added through the admin API later within seconds, and keep serving one
// signed or unsigned later (signed, it transfers signed).
func TestCatalogSecondaries(t *testing.T) {
	t.Parallel()
	knotPort, bindPort := freePort(t), freePort(t)
	s := start(t, options{profile: 2, extra: []string{recKeyLine(t), "catalog catalog.invalid"}, block: []string{
		fmt.Sprintf("transfer {\n    to 127.0.0.1:%d 127.0.0.1:%d\n  }", knotPort, bindPort),
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}})
	_, keyA := s.team(t, "a.example.net")
	_, hostA := s.recHost(t, keyA, "web", "198.41.0.4")
	secs := []*secondary{startCatalogSecondary(t, "knot", knotPort, s.dnsAddr), startCatalogSecondary(t, "bind", bindPort, s.dnsAddr)}

	serves := func(sec *secondary, name, want string) bool {
		r := askAt(sec.addr, name, dns.TypeA)
		return r != nil && r.Rcode == dns.RcodeSuccess && r.Authoritative && slices.Equal(addrs(r), []string{want})
	}
	for _, sec := range secs {
		if !within(20*time.Second, func() bool { return serves(sec, hostA, "198.41.0.4") }) {
			t.Fatalf("%s does not serve %s from the catalog", sec.name, hostA)
		}
	}

	// A team and its domain added through the admin API: no secondary is touched.
	began := time.Now()
	_, keyB := s.team(t, "b.example.net")
	for _, sec := range secs {
		if !within(15*time.Second, func() bool {
			r := askAt(sec.addr, "b.example.net", dns.TypeSOA)
			return r != nil && r.Rcode == dns.RcodeSuccess && r.Authoritative
		}) {
			t.Fatalf("%s does not serve b.example.net, a domain added after it started", sec.name)
		}
		t.Logf("%s serves the new domain %v after the admin API created it", sec.name, time.Since(began).Round(time.Millisecond))
	}
	_, hostB := s.recHost(t, keyB, "web", "198.41.0.5")
	for _, sec := range secs {
		if !within(5*time.Second, func() bool { return serves(sec, hostB, "198.41.0.5") }) {
			t.Fatalf("%s does not serve %s", sec.name, hostB)
		}
	}

	// Signed: still a member, and the secondaries serve it signed; unsigned
	// again, unsigned, and a member all along.
	signedAt := func(sec *secondary, name string) bool {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypeA)
		m.SetEdns0(1232, true)
		r, _, err := (&dns.Client{Timeout: 500 * time.Millisecond}).Exchange(m, sec.addr)
		return err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) == 2 && r.Answer[1].Header().Rrtype == dns.TypeRRSIG
	}
	s.must(200, "PATCH", "/api/admin/domains/"+s.recDomainID(t, "a.example.net"), s.admin, recObj{"dnssec": true})
	for _, sec := range secs {
		if !within(15*time.Second, func() bool { return signedAt(sec, hostA) }) {
			t.Errorf("%s does not serve %s signed after its domain was signed", sec.name, hostA)
		}
		if !serves(sec, hostB, "198.41.0.5") {
			t.Errorf("%s stopped serving %s", sec.name, hostB)
		}
	}
	s.must(200, "PATCH", "/api/admin/domains/"+s.recDomainID(t, "a.example.net"), s.admin, recObj{"dnssec": false})
	for _, sec := range secs {
		if !within(15*time.Second, func() bool { return serves(sec, hostA, "198.41.0.4") && !signedAt(sec, hostA) }) {
			t.Errorf("%s does not serve %s unsigned after its domain was unsigned", sec.name, hostA)
		}
	}
}

// Every node sharing a store serves the same catalog, and a node started
// again serves it unchanged: a secondary may transfer it from any of them.
func TestCatalogSameOnEveryNode(t *testing.T) {
	t.Parallel()
	xfr := []string{fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret), "transfer {\n    to 127.0.0.1:9\n  }"}
	o := options{profile: 2, dialect: storage.Postgres, extra: []string{"catalog catalog.invalid"}, block: xfr}
	a := start(t, o)
	o.dsn, o.dir = a.dsn, a.dir
	b := start(t, o)
	for _, d := range []string{"one.example.net", "two.example.net"} {
		a.team(t, d)
	}
	catalog := func(s *server) string {
		rrs, err := axfr(s.dnsAddr, "catalog.invalid")
		if err != nil {
			return err.Error()
		}
		var lines []string
		for _, rr := range rrs {
			lines = append(lines, rr.String())
		}
		return strings.Join(lines, "\n")
	}
	if !within(5*time.Second, func() bool { return catalog(a) == catalog(b) && strings.Count(catalog(a), "PTR") == 3 }) {
		t.Fatalf("the nodes' catalogs differ:\n%s\n---\n%s", catalog(a), catalog(b))
	}
	before := catalog(b)
	b.stop()
	c := start(t, o)
	if got := catalog(c); got != before {
		t.Errorf("the catalog after a restart:\n%s\nbefore:\n%s", got, before)
	}
}
