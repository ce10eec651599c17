package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Knot and Hostmint asked the same crafted queries over the same zone
// content: Knot is a secondary of the signed team domain, so it serves
// what Hostmint transfers. Each answer is reduced to its shape (rcode,
// header bits, the OPT's flags, each section's record types and owners);
// the shapes must be equal but for the intended differences listed with
// their reasons. A new difference shows up as a failing line.

// shape is what the comparison looks at of an answer: not TTLs, record
// data or signatures, which two servers may differ in and still both be
// right, nor the additional section's RRSIGs, which one server includes
// and another leaves out for room as RFC 4035 3.1.1 allows.
func shape(m *dns.Msg) string {
	if m == nil {
		return "no answer"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", dns.OpcodeToString[m.Opcode], dns.RcodeToString[m.Rcode])
	for _, f := range []struct {
		on   bool
		name string
	}{{m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"}, {m.RecursionAvailable, "ra"},
		{m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	fmt.Fprintf(&b, " q=%d", len(m.Question))
	if o := m.IsEdns0(); o != nil {
		fmt.Fprintf(&b, " opt(v%d do=%v co=%v z=%#x)", o.Version(), o.Do(), o.Co(), o.Hdr.Ttl&0x3fff)
	}
	section := func(name string, rrs []dns.RR, skipSigs bool) {
		var parts []string
		for _, rr := range rrs {
			t := rr.Header().Rrtype
			if t == dns.TypeOPT || skipSigs && t == dns.TypeRRSIG {
				continue
			}
			part := strings.ToLower(rr.Header().Name) + "/" + dns.TypeToString[t]
			if sig, ok := rr.(*dns.RRSIG); ok {
				part += "(" + dns.TypeToString[sig.TypeCovered] + ")"
			}
			parts = append(parts, part)
		}
		slices.Sort(parts)
		fmt.Fprintf(&b, " %s=[%s]", name, strings.Join(parts, " "))
	}
	section("an", m.Answer, false)
	section("ns", m.Ns, false)
	section("ar", m.Extra, true)
	return b.String()
}

// crafted is one query of the comparison, and why the two may differ
// (empty: they may not).
type crafted struct {
	name   string
	msg    *dns.Msg
	tcp    bool
	differ string
}

func TestKnotSideBySide(t *testing.T) {
	t.Parallel()
	knotPort := freePort(t)
	s := start(t, options{dialect: storage.SQLite, profile: 2, extra: []string{recKeyLine(t)}, block: []string{
		fmt.Sprintf("transfer {\n    to 127.0.0.1:%d\n  }", knotPort),
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}})
	_, key := s.team(t, signedDomain)
	web, _ := s.recHost(t, key, "web", "198.41.0.4")
	for i, sub := range []string{"mx1", "mx2", "mx3"} {
		s.recHost(t, key, sub, fmt.Sprintf("198.41.0.%d", 10+i))
		s.must(201, "POST", recPath(web), key, recObj{"type": "MX", "preference": 10 * (i + 1), "exchange": sub + "." + signedDomain})
	}
	s.must(201, "POST", recPath(web), key, recObj{"type": "SRV", "name": "_sip._tcp", "priority": 10, "weight": 5,
		"port": 5060, "target": "mx1." + signedDomain})
	s.must(201, "POST", recPath(web), key, recObj{"type": "TXT", "text": strings.Repeat("long text ", 60)})
	s.must(200, "PATCH", "/api/admin/domains/"+s.recDomainID(t, signedDomain), s.admin, recObj{"dnssec": true})

	knot := startSignedSecondary(t, "knot", knotPort, s.dnsAddr)
	if !within(20*time.Second, func() bool {
		a, okA := serialOf(s.dnsAddr, signedDomain)
		b, okB := serialOf(knot.addr, signedDomain)
		return okA && okB && a == b
	}) {
		t.Fatal("Knot did not load the signed zone at the primary's serial")
	}

	z, webName := signedDomain, "web."+signedDomain
	cases := []crafted{
		{name: "SOA", msg: hostileQuery(z, dns.TypeSOA)},
		{name: "SOA, EDNS", msg: hostileQuery(z, dns.TypeSOA, hostileEDNS(1232, false))},
		{name: "SOA, DO", msg: hostileQuery(z, dns.TypeSOA, hostileEDNS(1232, true))},
		{name: "SOA, RD", msg: hostileQuery(z, dns.TypeSOA, hostileRD)},
		{name: "SOA, CD (cleared, RFC 4035 3.1.6)", msg: hostileQuery(z, dns.TypeSOA, hostileEDNS(1232, true), func(m *dns.Msg) { m.CheckingDisabled = true })},
		{name: "SOA, unknown EDNS flags (not echoed, RFC 6891 6.1.4)", msg: hostileQuery(z, dns.TypeSOA, hostileEDNS(1232, false),
			func(m *dns.Msg) { m.IsEdns0().Hdr.Ttl |= 0x2100 })},
		{name: "NS, DO", msg: hostileQuery(z, dns.TypeNS, hostileEDNS(1232, true)),
			differ: "Hostmint serves example.org too, so it adds ns1.example.org's address from that zone (unsigned, RFC 4035 5.3.1); Knot holds this zone alone"},
		{name: "DNSKEY, DO", msg: hostileQuery(z, dns.TypeDNSKEY, hostileEDNS(1232, true))},
		{name: "A, DO", msg: hostileQuery(webName, dns.TypeA, hostileEDNS(1232, true))},
		{name: "AAAA at a name with A only, DO", msg: hostileQuery(webName, dns.TypeAAAA, hostileEDNS(1232, true))},
		{name: "MX with its targets' addresses", msg: hostileQuery(webName, dns.TypeMX, hostileEDNS(1232, false))},
		{name: "MX, DO, 512 octets: no TC for the targets' RRSIGs alone (RFC 4035 3.1.1)", msg: hostileQuery(webName, dns.TypeMX, hostileEDNS(512, true))},
		{name: "SRV with its target's address", msg: hostileQuery("_sip._tcp."+webName, dns.TypeSRV, hostileEDNS(1232, false))},
		{name: "TXT too big for UDP: TC", msg: hostileQuery(webName, dns.TypeTXT)},
		{name: "TXT over TCP", msg: hostileQuery(webName, dns.TypeTXT), tcp: true},
		{name: "empty non-terminal, DO", msg: hostileQuery("_tcp."+webName, dns.TypeTXT, hostileEDNS(1232, true)),
			differ: "online signing: Hostmint's NSEC stands at the empty non-terminal itself, listing no type; Knot's precomputed chain covers it with the NSEC before it"},
		{name: "a name outside the zone", msg: hostileQuery("example.com", dns.TypeA, hostileEDNS(1232, false))},
		{name: "IXFR over UDP (RFC 1995 2: the SOA)", msg: new(dns.Msg).SetIxfr(dns.Fqdn(z), 1, "ns.", "mbox."), differ: "Hostmint sets AA on the SOA, as on every transfer's answer (RFC 5936 2.2.1); Knot leaves it clear over UDP"},
		{name: "a missing name, DO", msg: hostileQuery("nothing."+z, dns.TypeA, hostileEDNS(1232, true)),
			differ: "compact denial (RFC 9824): Hostmint signs online and answers NOERROR with the name's own NSEC; Knot, serving the transferred NSEC chain, NXDOMAIN with its covering NSECs"},
		{name: "a missing name", msg: hostileQuery("nothing."+z, dns.TypeA, hostileEDNS(1232, false))},
		{name: "ANY", msg: hostileQuery(webName, dns.TypeANY, hostileEDNS(1232, false)),
			differ: "RFC 8482 4.2 against 4.1: Hostmint answers one synthesised HINFO, Knot one of the name's RRsets"},
		{name: "NXNAME", msg: hostileQuery(webName, 128, hostileEDNS(1232, false)),
			differ: "RFC 9824 3.5: Hostmint answers FORMERR; Knot 3.2 predates RFC 9824"},
		{name: "opcode STATUS", msg: hostileQuery(z, dns.TypeSOA, hostileEDNS(1232, false), func(m *dns.Msg) { m.Opcode = dns.OpcodeStatus }),
			differ: "CoreDNS's server answers NOTIMP from the header, without question or OPT (README, known deviations)"},
	}
	for _, tc := range cases {
		proto := "udp"
		if tc.tcp {
			proto = "tcp"
		}
		ask := func(addr string) *dns.Msg {
			q := tc.msg.Copy()
			q.Id = dns.Id()
			c := &dns.Client{Net: proto, Timeout: 2 * time.Second, UDPSize: 65535}
			r, _, err := c.Exchange(q, addr)
			if err != nil && r == nil {
				return nil
			}
			return r
		}
		hm, km := shape(ask(s.dnsAddr)), shape(ask(knot.addr))
		switch {
		case tc.differ == "" && hm != km:
			t.Errorf("%s:\n  hostmint %s\n  knot     %s", tc.name, hm, km)
		case tc.differ != "" && hm == km:
			t.Errorf("%s: now answered alike (%s); drop it from the intended differences", tc.name, hm)
		case tc.differ != "":
			t.Logf("%s (intended: %s):\n  hostmint %s\n  knot     %s", tc.name, tc.differ, hm, km)
		}
	}
}
