package hostname

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

const testSerial = 2026

// newTestHandler is a handler for the Corefile block body, with an index
// that holds zones and is loaded, without a store behind it.
func newTestHandler(tb testing.TB, body string, zones ...string) *Handler {
	tb.Helper()
	cfg, err := parse(caddy.NewTestController("dns", block(body)))
	if err != nil {
		tb.Fatal(err)
	}
	h := newHandler(cfg)
	zs := index.Set{}
	for i, z := range zones {
		zs[z] = &index.Zone{Name: z, ID: fmt.Sprintf("dom_%d", i), Kind: index.KindPool, Names: index.NewTable(0)}
	}
	h.index.SetZones(zs)
	h.index.SetSerial(testSerial)
	h.index.SetLoaded(true)
	return h
}

// addHost puts name (lowercase FQDN) in h's index; expires is Unix ms, 0 for never.
func addHost(h *Handler, name, ip string, expires int64) {
	n := &index.Node{Owner: index.Holder("hn_" + name), Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr(ip)}), Expires: expires}
	index.Settle(n, nil, time.Now().UnixMilli()) // as a load or a change builds it
	h.index.Put(name, n)
}

// fixture is example.org. and example.net., served by ns1.example.org
// (192.0.2.53), ns2.example.net (no address) and ns3.example.org (2001:db8::53).
func fixture(tb testing.TB) *Handler {
	tb.Helper()
	h := newTestHandler(tb,
		"nameserver ns1.example.org 192.0.2.53:53\n"+
			"nameserver ns2.example.net\n"+
			"nameserver ns3.example.org 2001:db8::53\n",
		"example.org.", "example.net.")
	now := time.Now()
	addHost(h, "abc.example.org.", "192.0.2.10", now.Add(10*365*24*time.Hour).UnixMilli())
	addHost(h, "v6.example.org.", "2001:db8::10", 0)
	addHost(h, "old.example.org.", "192.0.2.11", now.Add(-time.Minute).UnixMilli())
	addHost(h, "web.example.net.", "192.0.2.20", 0)
	return h
}

// Negative answers carry the zone's SOA with TTL min(SOA TTL, minimum) = 60.
var (
	orgSOA = test.SOA("example.org.	60	IN	SOA	ns1.example.org. hostmaster.example.org. 2026 3600 600 1209600 60")
	netSOA = test.SOA("example.net.	60	IN	SOA	ns1.example.org. hostmaster.example.net. 2026 3600 600 1209600 60")
	orgNS  = []dns.RR{
		test.NS("example.org.	3600	IN	NS	ns1.example.org."),
		test.NS("example.org.	3600	IN	NS	ns2.example.net."),
		test.NS("example.org.	3600	IN	NS	ns3.example.org."),
	}
	glue = []dns.RR{
		test.A("ns1.example.org.	3600	IN	A	192.0.2.53"),
		test.AAAA("ns3.example.org.	3600	IN	AAAA	2001:db8::53"),
	}
)

var dnsTestCases = []test.Case{
	// Hostnames.
	{
		Qname: "abc.example.org.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("abc.example.org.	60	IN	A	192.0.2.10")},
	},
	{
		Qname: "abc.example.org.", Qtype: dns.TypeAAAA,
		Ns: []dns.RR{orgSOA},
	},
	// ANY: RFC 8482's synthesised HINFO, never the name's RRsets.
	{
		Qname: "abc.example.org.", Qtype: dns.TypeANY,
		Answer: []dns.RR{test.HINFO(`abc.example.org.	300	IN	HINFO	"RFC8482" ""`)},
	},
	{
		Qname: "abc.example.org.", Qtype: dns.TypeMX,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "abc.example.org.", Qtype: dns.TypeTXT,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "v6.example.org.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("v6.example.org.	60	IN	AAAA	2001:db8::10")},
	},
	{
		Qname: "v6.example.org.", Qtype: dns.TypeA,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "web.example.net.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("web.example.net.	60	IN	A	192.0.2.20")},
	},
	// Owner names in the client's case.
	{
		Qname: "AbC.Example.ORG.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("AbC.Example.ORG.	60	IN	A	192.0.2.10")},
	},
	{
		Qname: "V6.EXAMPLE.ORG.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("V6.EXAMPLE.ORG.	60	IN	AAAA	2001:db8::10")},
	},
	// Names that do not exist.
	{
		Qname: "old.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "nope.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "nope.example.net.", Qtype: dns.TypeAAAA, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{netSOA},
	},
	{
		Qname: "x.abc.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "_acme-challenge.abc.example.org.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{orgSOA},
	},
	// The apex.
	{
		Qname: "example.org.", Qtype: dns.TypeSOA,
		Answer: []dns.RR{test.SOA("example.org.	60	IN	SOA	ns1.example.org. hostmaster.example.org. 2026 3600 600 1209600 60")},
	},
	{
		Qname: "Example.ORG.", Qtype: dns.TypeSOA,
		Answer: []dns.RR{test.SOA("Example.ORG.	60	IN	SOA	ns1.example.org. hostmaster.example.org. 2026 3600 600 1209600 60")},
	},
	{
		Qname: "example.org.", Qtype: dns.TypeNS,
		Answer: orgNS,
		Extra:  glue, // ns1 and ns3 are in our zones and have addresses; ns2 has none.
	},
	{
		Qname: "example.net.", Qtype: dns.TypeNS,
		Answer: []dns.RR{
			test.NS("example.net.	3600	IN	NS	ns1.example.org."),
			test.NS("example.net.	3600	IN	NS	ns2.example.net."),
			test.NS("example.net.	3600	IN	NS	ns3.example.org."),
		},
		Extra: glue,
	},
	{
		Qname: "example.org.", Qtype: dns.TypeA,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "example.org.", Qtype: dns.TypeAAAA,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "example.org.", Qtype: dns.TypeANY,
		Answer: []dns.RR{test.HINFO(`example.org.	300	IN	HINFO	"RFC8482" ""`)},
	},
	{
		Qname: "nope.example.org.", Qtype: dns.TypeANY, Rcode: dns.RcodeNameError,
		Ns: []dns.RR{orgSOA},
	},
	// The nameservers' own names.
	{
		Qname: "ns1.example.org.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("ns1.example.org.	3600	IN	A	192.0.2.53")},
	},
	{
		Qname: "NS1.example.org.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("NS1.example.org.	3600	IN	A	192.0.2.53")},
	},
	{
		Qname: "ns1.example.org.", Qtype: dns.TypeAAAA,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "ns3.example.org.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("ns3.example.org.	3600	IN	AAAA	2001:db8::53")},
	},
	{
		Qname: "ns3.example.org.", Qtype: dns.TypeA,
		Ns: []dns.RR{orgSOA},
	},
	{
		Qname: "ns3.example.org.", Qtype: dns.TypeANY,
		Answer: []dns.RR{test.HINFO(`ns3.example.org.	300	IN	HINFO	"RFC8482" ""`)},
	},
}

func TestServeDNS(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	ctx := context.TODO()

	for _, tc := range dnsTestCases {
		t.Run(dns.TypeToString[tc.Qtype]+" "+tc.Qname, func(t *testing.T) {
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			rcode, err := h.ServeDNS(ctx, rec, tc.Msg())
			if err != nil || rcode != dns.RcodeSuccess {
				t.Fatalf("ServeDNS = %d, %v; want %d (written), nil", rcode, err, dns.RcodeSuccess)
			}
			resp := rec.Msg
			if resp == nil {
				t.Fatal("nothing was written")
			}
			if !resp.Authoritative {
				t.Error("AA bit not set")
			}
			if resp.Truncated {
				t.Error("TC bit set")
			}
			if err := test.SortAndCheck(resp, tc); err != nil {
				t.Error(err)
			}
		})
	}
}

// test.Section compares only the MNAME of an SOA; negative caching and
// zone transfers depend on the rest.
func TestServeDNSSOAFields(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	for _, tc := range []struct {
		qname string
		qtype uint16
		sect  func(*dns.Msg) []dns.RR
		want  string
	}{
		{"example.org.", dns.TypeSOA, func(m *dns.Msg) []dns.RR { return m.Answer },
			"example.org.\t60\tIN\tSOA\tns1.example.org. hostmaster.example.org. 2026 3600 600 1209600 60"},
		{"nope.example.net.", dns.TypeA, func(m *dns.Msg) []dns.RR { return m.Ns },
			"example.net.\t60\tIN\tSOA\tns1.example.org. hostmaster.example.net. 2026 3600 600 1209600 60"},
		{"abc.example.org.", dns.TypeAAAA, func(m *dns.Msg) []dns.RR { return m.Ns },
			"example.org.\t60\tIN\tSOA\tns1.example.org. hostmaster.example.org. 2026 3600 600 1209600 60"},
	} {
		m := new(dns.Msg)
		m.SetQuestion(tc.qname, tc.qtype)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, m)
		rrs := tc.sect(rec.Msg)
		if len(rrs) != 1 || rrs[0].String() != tc.want {
			t.Errorf("%s %s: got %v, want [%s]", dns.TypeToString[tc.qtype], tc.qname, rrs, tc.want)
		}
	}
}

func TestServeDNSTTLCappedAtExpiry(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	addHost(h, "soon.example.org.", "192.0.2.12", time.Now().Add(10*time.Second).UnixMilli())

	m := new(dns.Msg)
	m.SetQuestion("soon.example.org.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, m)
	if rec.Msg == nil || len(rec.Msg.Answer) != 1 {
		t.Fatalf("want one A record, got %v", rec.Msg)
	}
	if ttl := rec.Msg.Answer[0].Header().Ttl; ttl < 1 || ttl > 10 {
		t.Errorf("TTL = %d, want 1..10 (the seconds left before the name expires)", ttl)
	}
}

// ANY's HINFO lives no longer than the hostname either, and a name that
// holds nothing itself (an empty non-terminal) answers ANY with NODATA.
func TestServeDNSAnyMinimal(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	addHost(h, "soon.example.org.", "192.0.2.12", time.Now().Add(10*time.Second).UnixMilli())
	h.index.Put("sub.example.org.", &index.Node{})

	m := new(dns.Msg)
	m.SetQuestion("soon.example.org.", dns.TypeANY)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, m)
	if len(rec.Msg.Answer) != 1 || rec.Msg.Answer[0].Header().Rrtype != dns.TypeHINFO {
		t.Fatalf("ANY at a hostname: %v, want one HINFO", rec.Msg.Answer)
	}
	if ttl := rec.Msg.Answer[0].Header().Ttl; ttl < 1 || ttl > 10 {
		t.Errorf("HINFO TTL = %d, want 1..10 (the seconds left before the name expires)", ttl)
	}

	m.SetQuestion("sub.example.org.", dns.TypeANY)
	rec = dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, m)
	if err := test.SortAndCheck(rec.Msg, test.Case{Qname: "sub.example.org.", Qtype: dns.TypeANY, Ns: []dns.RR{orgSOA}}); err != nil {
		t.Errorf("ANY at an empty non-terminal: %v", err)
	}
}

func TestHostTTL(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_800_000_000_000)
	ms := now.UnixMilli()
	tests := []struct {
		expires int64
		ttl     uint32
		live    bool
	}{
		{0, 60, true},
		{ms + 3_600_000, 60, true},
		{ms + 60_000, 60, true},
		{ms + 59_001, 60, true}, // rounded up: never 0 while live
		{ms + 59_000, 59, true},
		{ms + 10_000, 10, true},
		{ms + 1, 1, true},
		{ms, 0, false},
		{ms - 1, 0, false},
	}
	for _, tc := range tests {
		e := &index.Node{Expires: tc.expires}
		ttl, live := e.TTL(60, now)
		if ttl != tc.ttl || live != tc.live {
			t.Errorf("expires %+d ms: ttl, live = %d, %t; want %d, %t", tc.expires-ms, ttl, live, tc.ttl, tc.live)
		}
	}
}

func TestServeDNSAddressTTL(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\naddress_ttl 300\n", "example.org.")
	addHost(h, "abc.example.org.", "192.0.2.10", 0)
	addHost(h, "soon.example.org.", "192.0.2.12", time.Now().Add(time.Hour).UnixMilli())

	for _, name := range []string{"abc.example.org.", "soon.example.org."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, m)
		if len(rec.Msg.Answer) != 1 || rec.Msg.Answer[0].Header().Ttl != 300 {
			t.Errorf("%s: answer %v, want one record with TTL 300", name, rec.Msg.Answer)
		}
	}
}

// Glue is only for nameserver names inside our zones; an out-of-zone
// nameserver's address is not ours to vouch for.
func TestServeDNSGlueInZoneOnly(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\nnameserver ns2.example.com 198.51.100.53\n", "example.org.")
	tc := test.Case{
		Qname: "example.org.", Qtype: dns.TypeNS,
		Answer: []dns.RR{
			test.NS("example.org.	3600	IN	NS	ns1.example.org."),
			test.NS("example.org.	3600	IN	NS	ns2.example.com."),
		},
		Extra: []dns.RR{test.A("ns1.example.org.	3600	IN	A	192.0.2.53")},
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, tc.Msg())
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Error(err)
	}

	m := new(dns.Msg)
	m.SetQuestion("ns2.example.com.", dns.TypeA)
	rec = dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, m)
	checkRefusal(t, "ns2.example.com. A (not in our zones)", m, rec.Msg, dns.RcodeRefused)
}

// A nameserver name below the apex makes its parent an empty non-terminal.
func TestServeDNSEmptyNonTerminal(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.dns.example.org 192.0.2.53\n", "example.org.")
	soa := test.SOA("example.org.	60	IN	SOA	ns1.dns.example.org. hostmaster.example.org. 2026 3600 600 1209600 60")
	for _, tc := range []test.Case{
		{Qname: "ns1.dns.example.org.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("ns1.dns.example.org.	3600	IN	A	192.0.2.53")}},
		{Qname: "dns.example.org.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "DNS.example.org.", Qtype: dns.TypeAAAA, Ns: []dns.RR{soa}},
		{Qname: "ns2.dns.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{soa}},
		{Qname: "ns.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{soa}},
		{Qname: "s.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{soa}},
	} {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, tc.Msg())
		if err := test.SortAndCheck(rec.Msg, tc); err != nil {
			t.Errorf("%s %s: %v", dns.TypeToString[tc.Qtype], tc.Qname, err)
		}
	}
}

// With a domain inside another, the most specific zone answers.
func TestServeDNSNestedZones(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\n", "example.org.", "dyn.example.org.")
	addHost(h, "a.dyn.example.org.", "192.0.2.30", 0)
	for _, tc := range []test.Case{
		{Qname: "a.dyn.example.org.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("a.dyn.example.org.	60	IN	A	192.0.2.30")}},
		{Qname: "b.dyn.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{
			test.SOA("dyn.example.org.	60	IN	SOA	ns1.example.org. hostmaster.dyn.example.org. 2026 3600 600 1209600 60"),
		}},
		{Qname: "dyn.example.org.", Qtype: dns.TypeSOA, Answer: []dns.RR{
			test.SOA("dyn.example.org.	60	IN	SOA	ns1.example.org. hostmaster.dyn.example.org. 2026 3600 600 1209600 60"),
		}},
	} {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, tc.Msg())
		if err := test.SortAndCheck(rec.Msg, tc); err != nil {
			t.Errorf("%s %s: %v", dns.TypeToString[tc.Qtype], tc.Qname, err)
		}
	}
}

func TestServeDNSOutsideZones(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	for _, qname := range []string{"example.com.", "www.example.com.", "org.", ".", "example.org.example.com."} {
		m := new(dns.Msg)
		m.SetQuestion(qname, dns.TypeA)

		m.SetEdns0(4096, false)
		m.IsEdns0().Hdr.Ttl |= 0x2100 // flags no RFC defines: a sender sets them to zero (RFC 6891 6.1.4)
		m.CheckingDisabled = true

		// Without a next plugin: REFUSED, written here as CoreDNS's server
		// would not (its echoes the OPT's flags and CD).
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if rcode, err := h.ServeDNS(context.TODO(), rec, m); rcode != dns.RcodeSuccess || err != nil {
			t.Errorf("%s: ServeDNS = %d, %v; want it written", qname, rcode, err)
		}
		checkRefusal(t, qname, m, rec.Msg, dns.RcodeRefused)
	}
}

// checkRefusal checks got, the answer to q that is rcode alone: q's
// question, our OPT when q had one (its flags not echoed), CD clear.
func checkRefusal(t *testing.T, what string, q, got *dns.Msg, rcode int) {
	t.Helper()
	switch {
	case got == nil:
		t.Errorf("%s: nothing written", what)
	case got.Rcode != rcode || !got.Response || got.Id != q.Id:
		t.Errorf("%s: answered %s", what, got)
	case len(got.Question) != 1 || got.Question[0] != q.Question[0]:
		t.Errorf("%s: question %v, want %v", what, got.Question, q.Question)
	case got.CheckingDisabled:
		t.Errorf("%s: CD copied (RFC 4035 3.1.6)", what)
	case (got.IsEdns0() != nil) != (q.IsEdns0() != nil):
		t.Errorf("%s: OPT %v for a query with OPT %v", what, got.IsEdns0(), q.IsEdns0())
	case got.IsEdns0() != nil && got.IsEdns0().Hdr.Ttl&0x3fff != 0:
		t.Errorf("%s: OPT flags %#x echoed (RFC 6891 6.1.4)", what, got.IsEdns0().Hdr.Ttl)
	}
}

func TestServeDNSNext(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	var called []string
	h.Next = test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		called = append(called, r.Question[0].Name)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = []dns.RR{test.A(r.Question[0].Name + "	300	IN	A	198.51.100.1")}
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	})

	// Outside our zones: next answers.
	m := new(dns.Msg)
	m.SetQuestion("www.example.com.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := h.ServeDNS(context.TODO(), rec, m)
	if rcode != dns.RcodeSuccess || err != nil {
		t.Errorf("ServeDNS = %d, %v; want the next plugin's 0, nil", rcode, err)
	}
	if len(called) != 1 || rec.Msg == nil || rec.Msg.Authoritative || len(rec.Msg.Answer) != 1 {
		t.Errorf("next plugin not used: called %v, reply %v", called, rec.Msg)
	}

	// Inside our zones, even a miss: we answer, next is not asked.
	called = nil
	for _, qname := range []string{"abc.example.org.", "nope.example.org.", "example.net."} {
		m := new(dns.Msg)
		m.SetQuestion(qname, dns.TypeA)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, m)
		if rec.Msg == nil || !rec.Msg.Authoritative {
			t.Errorf("%s: reply %v, want ours (authoritative)", qname, rec.Msg)
		}
	}
	if len(called) != 0 {
		t.Errorf("next plugin asked for %v, names in our zones", called)
	}
}

func TestServeDNSNotLoaded(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	if h.Ready() {
		t.Error("Ready() = true before the node started")
	}
	var n Node = indexNode{h.index}
	h.node.Store(&n)
	h.index.SetLoaded(false)
	if h.Ready() {
		t.Error("Ready() = true before the index is loaded")
	}
	m := new(dns.Msg)
	m.SetQuestion("abc.example.org.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := h.ServeDNS(context.TODO(), rec, m); err != nil {
		t.Error(err)
	}
	checkRefusal(t, "not loaded", m, rec.Msg, dns.RcodeServerFailure)

	h.index.SetLoaded(true)
	if !h.Ready() {
		t.Error("Ready() = false once the index is loaded")
	}
}

// The answer's OPT carries this server's buffer size (1232), not an echo
// of the client's (RFC 6891 6.2.3), and its answer.DO bit.
func TestServeDNSEdns0(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	for _, tc := range []struct {
		test.Case
		size uint16
	}{
		{test.Case{
			Qname: "abc.example.org.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("abc.example.org.	60	IN	A	192.0.2.10")},
			Extra:  []dns.RR{test.OPT(1232, false)}, // ours, not the client's 4096
		}, 4096},
		{test.Case{
			Qname: "nope.example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns:    []dns.RR{orgSOA},
			Extra: []dns.RR{test.OPT(1232, false)},
		}, 1232},
		{test.Case{
			Qname: "abc.example.org.", Qtype: dns.TypeA, Do: true,
			Answer: []dns.RR{test.A("abc.example.org.	60	IN	A	192.0.2.10")},
			Extra:  []dns.RR{test.OPT(1232, true)},
		}, 4096},
	} {
		m := tc.Msg()
		if !tc.Do {
			m.SetEdns0(tc.size, false)
		}
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.TODO(), rec, m)
		if err := test.SortAndCheck(rec.Msg, tc.Case); err != nil {
			t.Errorf("%s (EDNS0 %d, answer.DO %t): %v", tc.Qname, tc.size, tc.Do, err)
		}
	}

	// Without OPT in the query there is none in the reply.
	m := new(dns.Msg)
	m.SetQuestion("abc.example.org.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	h.ServeDNS(context.TODO(), rec, m)
	if rec.Msg.IsEdns0() != nil {
		t.Error("OPT in the reply to a query without one")
	}
}

// Twenty nameservers with addresses make the apex NS answer with its glue
// (about 730 bytes compressed) too big for a 512-byte UDP reply.
func TestServeDNSTruncation(t *testing.T) {
	t.Parallel()
	const n = 20
	body := ""
	for i := range n {
		body += fmt.Sprintf("nameserver ns%02d.example.org 192.0.2.%d\n", i, i+1)
	}
	h := newTestHandler(t, body, "example.org.")

	for _, tc := range []struct {
		name      string
		tcp       bool
		edns      uint16
		truncated bool
		max       int
	}{
		{"udp", false, 0, true, dns.MinMsgSize},
		{"udp edns 1232", false, 1232, false, 1232},
		{"udp edns 4096", false, 4096, false, 4096},
		{"tcp", true, 0, false, dns.MaxMsgSize},
	} {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeNS)
		if tc.edns != 0 {
			m.SetEdns0(tc.edns, false)
		}
		rec := dnstest.NewRecorder(&test.ResponseWriter{TCP: tc.tcp})
		h.ServeDNS(context.TODO(), rec, m)
		resp := rec.Msg
		if resp.Truncated != tc.truncated {
			t.Errorf("%s: TC = %t, want %t", tc.name, resp.Truncated, tc.truncated)
		}
		buf, err := resp.Pack()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(buf) > tc.max {
			t.Errorf("%s: reply is %d bytes, more than %d", tc.name, len(buf), tc.max)
		}
		if !tc.truncated && (len(resp.Answer) != n || len(resp.Extra) < n) {
			t.Errorf("%s: %d NS, %d additional; want %d NS and %d glue", tc.name, len(resp.Answer), len(resp.Extra), n, n)
		}
		if tc.edns != 0 && resp.IsEdns0() == nil {
			t.Errorf("%s: no OPT in the reply", tc.name)
		}
	}
}

func BenchmarkServeDNS(b *testing.B) {
	h := newTestHandler(b, "nameserver ns1.example.org 192.0.2.53\nnameserver ns2.example.net\n", "example.org.", "example.net.")
	const n = 100_000
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		var exp int64
		if i%2 == 0 {
			exp = far
		}
		n := &index.Node{Owner: index.Holder(fmt.Sprint(i)), Host: true, Addrs: index.PackAddrs([]netip.Addr{ip}), Expires: exp}
		h.index.Put(fmt.Sprintf("h%06d.example.org.", i), n)
	}

	// 80% names that exist, 20% that do not.
	rng := rand.New(rand.NewPCG(1, 2))
	qs := make([]*dns.Msg, 4096)
	for i := range qs {
		m := new(dns.Msg)
		if i%5 == 4 {
			m.SetQuestion(fmt.Sprintf("m%06d.example.org.", rng.IntN(n)), dns.TypeA)
		} else {
			m.SetQuestion(fmt.Sprintf("h%06d.example.org.", rng.IntN(n)), dns.TypeA)
		}
		qs[i] = m
	}
	w := &test.ResponseWriter{}
	ctx := context.Background()

	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.ServeDNS(ctx, w, qs[i%len(qs)])
	}
}

// indexNode is a Node whose readiness is its index's, as a started node's
// is before any lag.
type indexNode struct{ ix *index.Index }

func (n indexNode) Index() app.Index { return n.ix }
func (n indexNode) Ready() bool      { return n.ix.Loaded() && len(n.ix.Unservable()) == 0 }
func (n indexNode) Stop() error      { return nil }
