package hostname

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/miekg/dns"
)

const testCatalog = "catalog.invalid."

// catalogFixture serves example.org. (pool), team.example.net. and
// signed.example.net. (signed) with the catalog.
func catalogFixture(t *testing.T) *Handler {
	t.Helper()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\ncatalog catalog.invalid\n",
		"example.org.", "team.example.net.", "signed.example.net.")
	zs := *h.index.Zones()
	for _, z := range zs {
		z.CatalogVersion = 1 // created
	}
	zs["signed.example.net."].Signed, zs["signed.example.net."].CatalogVersion = true, 2 // and signed
	return h
}

func askCatalog(t *testing.T, h *Handler, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := h.ServeDNS(context.Background(), rec, m); err != nil || rec.Msg == nil {
		t.Fatalf("%s %s: %v, %v", name, dns.TypeToString[qtype], rec.Msg, err)
	}
	return rec.Msg
}

func TestCatalogZone(t *testing.T) {
	t.Parallel()
	h := catalogFixture(t)
	zs := *h.index.Zones()
	org, team := xfr.MemberID(zs["example.org."].ID)+".zones."+testCatalog, xfr.MemberID(zs["team.example.net."].ID)+".zones."+testCatalog

	tests := []struct {
		name   string
		qtype  uint16
		rcode  int
		answer []string // the answers' rdata
	}{
		{testCatalog, dns.TypeSOA, dns.RcodeSuccess, []string{"ns1.example.org. hostmaster.catalog.invalid. 5 3600 600 1209600 0"}},
		{testCatalog, dns.TypeNS, dns.RcodeSuccess, []string{"invalid."}},
		{"version." + testCatalog, dns.TypeTXT, dns.RcodeSuccess, []string{`"2"`}},
		{org, dns.TypePTR, dns.RcodeSuccess, []string{"example.org."}},
		{team, dns.TypePTR, dns.RcodeSuccess, []string{"team.example.net."}},
		{org, dns.TypeA, dns.RcodeSuccess, nil},
		{"zones." + testCatalog, dns.TypePTR, dns.RcodeSuccess, nil},
		{xfr.MemberID("nothing") + ".zones." + testCatalog, dns.TypePTR, dns.RcodeNameError, nil},
	}
	for _, tc := range tests {
		m := askCatalog(t, h, tc.name, tc.qtype)
		var got []string
		for _, rr := range m.Answer {
			got = append(got, rr.String()[len(rr.Header().String()):])
		}
		if m.Rcode != tc.rcode || !m.Authoritative || len(got) != len(tc.answer) || len(got) > 0 && got[0] != tc.answer[0] {
			t.Errorf("%s %s: %s %v (aa %v), want %s %v", tc.name, dns.TypeToString[tc.qtype], dns.RcodeToString[m.Rcode], got,
				m.Authoritative, dns.RcodeToString[tc.rcode], tc.answer)
		}
		if len(got) == 0 && (len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s %s: authority %v, want the catalog's SOA", tc.name, dns.TypeToString[tc.qtype], m.Ns)
		}
	}

	// The whole catalog: the SOA, NS, version, the three domains (the
	// signed one too: it transfers signed), the SOA.
	rrs := drain(t, must(h.Transfer(testCatalog, 0)))
	if len(rrs) != 7 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[6].Header().Rrtype != dns.TypeSOA {
		t.Errorf("AXFR of the catalog: %v", rrs)
	}
	if rrs := drain(t, must(h.Transfer(testCatalog, 5))); len(rrs) != 1 {
		t.Errorf("IXFR from the current serial: %v, want the SOA alone", rrs)
	}
}

func must(ch <-chan []dns.RR, err error) <-chan []dns.RR {
	if err != nil {
		panic(err)
	}
	return ch
}

// A served domain at or below the catalog's name is answered as itself.
func TestCatalogYieldsToDomains(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\ncatalog example.net\n", "dyn.example.net.", "example.org.")
	addHost(h, "a.dyn.example.net.", "192.0.2.7", 0)
	if m := askCatalog(t, h, "a.dyn.example.net.", dns.TypeA); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Errorf("a name of a domain below the catalog: %v", m)
	}
	if m := askCatalog(t, h, "version.example.net.", dns.TypeTXT); len(m.Answer) != 1 {
		t.Errorf("the catalog's own name: %v", m)
	}
}
