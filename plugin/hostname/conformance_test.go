package hostname

import (
	"context"
	"slices"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// An MX's and an SRV's targets that this server holds come with their
// addresses in the additional section (RFC 1035 3.3.9, RFC 2782), on both
// paths; a target held elsewhere, or that does not exist, does not.
func TestTargetsAdditional(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	addFuzzRecords(t, h)
	addHost(h, "mail.example.org.", "192.0.2.25", 0)
	addHost(h, "sip.example.net.", "2001:db8::25", 0)
	for _, tc := range []struct {
		qname string
		qtype uint16
		want  []string
	}{
		{"rec.example.org.", dns.TypeMX, []string{"mail.example.org.\t60\tIN\tA\t192.0.2.25"}},
		{"_sip._tcp.rec.example.org.", dns.TypeSRV, []string{"sip.example.net.\t60\tIN\tAAAA\t2001:db8::25"}},
		{"rec.example.org.", dns.TypeSSHFP, nil},
	} {
		for _, edns := range []bool{false, true} {
			q := new(dns.Msg)
			q.SetQuestion(tc.qname, tc.qtype)
			if edns {
				q.SetEdns0(1232, false)
			}
			for round := range 2 { // built, then from the kept bytes
				m, _ := serve(h, q).sent(t)
				var got []string
				for _, rr := range m.Extra {
					if rr.Header().Rrtype != dns.TypeOPT {
						got = append(got, rr.String())
					}
				}
				if len(m.Answer) == 0 || !slices.Equal(got, tc.want) {
					t.Errorf("%s %s (EDNS %v, round %d): additional %q, want %q\n%s", tc.qname, dns.TypeToString[tc.qtype], edns, round, got, tc.want, m)
				}
			}
		}
	}
}

// RFC 9824: a missing name's compact denial lists NXNAME in its NSEC,
// and NXDOMAIN is the rcode for a client that sets CO (which the answer
// echoes); a query of the NXNAME type itself is FORMERR.
func TestCompactDenial(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 3, true)
	for _, co := range []bool{false, true} {
		q := new(dns.Msg)
		q.SetQuestion("missing.example.org.", dns.TypeA)
		q.SetEdns0(1232, true)
		q.IsEdns0().SetCo(co)
		for round := range 2 {
			m, _ := serve(h, q).sent(t)
			want := dns.RcodeSuccess
			if co {
				want = dns.RcodeNameError
			}
			var nsec *dns.NSEC
			for _, rr := range m.Ns {
				if n, ok := rr.(*dns.NSEC); ok {
					nsec = n
				}
			}
			if m.Rcode != want || nsec == nil || !slices.Equal(nsec.TypeBitMap, []uint16{dns.TypeRRSIG, dns.TypeNSEC, sign.TypeNXNAME}) ||
				nsec.Hdr.Name != "missing.example.org." || m.IsEdns0() == nil || m.IsEdns0().Co() != co {
				t.Errorf("CO %v, round %d: %s", co, round, m)
			}
		}
	}
	// Another missing name's NXDOMAIN with CO is its own, not the first one's.
	q := new(dns.Msg)
	q.SetQuestion("other.example.org.", dns.TypeA)
	q.SetEdns0(1232, true)
	q.IsEdns0().SetCo()
	if m, _ := serve(h, q).sent(t); m.Rcode != dns.RcodeNameError || len(m.Ns) == 0 || !hasOwner(m.Ns, "other.example.org.") {
		t.Errorf("other name: %s", m)
	}

	q = new(dns.Msg)
	q.SetQuestion("missing.example.org.", sign.TypeNXNAME)
	q.SetEdns0(1232, true)
	if m, _ := serve(h, q).sent(t); m.Rcode != dns.RcodeFormatError || len(m.Question) != 1 || m.IsEdns0() == nil {
		t.Errorf("a query of NXNAME: %s", m)
	}
}

func hasOwner(rrs []dns.RR, owner string) bool {
	for _, rr := range rrs {
		if rr.Header().Name == owner && rr.Header().Rrtype == dns.TypeNSEC {
			return true
		}
	}
	return false
}

// An IXFR over UDP is answered with the zone's SOA alone (RFC 1995 2), so
// that a secondary goes on over TCP; over TCP it goes on to the transfer
// plugin, as does any other zone's.
func TestIXFROverUDP(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	gate := &keyGate{h: h, Next: test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return dns.RcodeRefused, nil // as the transfer plugin answers UDP
	})}
	for _, tc := range []struct {
		zone  string
		tcp   bool
		rcode int // the gate's return: 0 when it wrote the SOA
	}{
		{"example.org.", false, 0},
		{"EXAMPLE.net.", false, 0},
		{"example.org.", true, dns.RcodeRefused},
		{"example.com.", false, dns.RcodeRefused},
		{"abc.example.org.", false, dns.RcodeRefused},
	} {
		q := new(dns.Msg)
		q.SetIxfr(tc.zone, 1, "ns.", "mbox.")
		q.SetEdns0(1232, false)
		q.CheckingDisabled = true
		rec := dnstest.NewRecorder(&test.ResponseWriter{TCP: tc.tcp})
		rcode, err := gate.ServeDNS(context.Background(), rec, q)
		if rcode != tc.rcode || err != nil {
			t.Errorf("%s (TCP %v): %d %v, want %d", tc.zone, tc.tcp, rcode, err, tc.rcode)
			continue
		}
		if tc.rcode != 0 {
			continue
		}
		m := rec.Msg
		if m == nil || m.Rcode != dns.RcodeSuccess || !m.Authoritative || len(m.Answer) != 1 || m.Answer[0].Header().Rrtype != dns.TypeSOA ||
			m.Question[0] != q.Question[0] || m.IsEdns0() == nil || m.CheckingDisabled {
			t.Errorf("%s: %v", tc.zone, m)
		}
	}
}

// One nameserver named twice, once per address family, is one NS record
// with two glue addresses, never a repeated record (RFC 2181 5).
func TestNameserverBothFamilies(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53\nnameserver ns1.example.org [2001:db8::53]:53\nnameserver NS1.example.org.\n", "example.org.")
	q := new(dns.Msg)
	q.SetQuestion("example.org.", dns.TypeNS)
	m, _ := serve(h, q).sent(t)
	var got []string
	for _, rr := range append(m.Answer, m.Extra...) {
		got = append(got, rr.String())
	}
	want := []string{"example.org.\t3600\tIN\tNS\tns1.example.org.", "ns1.example.org.\t3600\tIN\tA\t192.0.2.53", "ns1.example.org.\t3600\tIN\tAAAA\t2001:db8::53"}
	if !slices.Equal(got, want) {
		t.Errorf("NS answer %q, want %q", got, want)
	}
}
