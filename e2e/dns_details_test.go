package e2e

import (
	"testing"

	"github.com/miekg/dns"
)

// What a resolver or a stray sender meets at the edges of the protocol:
// two OPT records are a malformed request (RFC 6891 6.1.1), and a NOTIFY
// to this primary is not implemented rather than answered like a query
// with the zone's SOA.
func TestDNSDetails(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	two := new(dns.Msg)
	two.SetQuestion("example.org.", dns.TypeSOA)
	two.SetEdns0(1232, false)
	two.Extra = append(two.Extra, &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}})
	notify := new(dns.Msg)
	notify.SetNotify("example.org.")
	for _, tc := range []struct {
		name  string
		m     *dns.Msg
		rcode int
	}{{"two OPT records", two, dns.RcodeFormatError}, {"NOTIFY", notify, dns.RcodeNotImplemented}} {
		for _, proto := range []string{"udp", "tcp"} {
			r, _, err := (&dns.Client{Net: proto}).Exchange(tc.m, s.dnsAddr)
			if err != nil {
				t.Fatalf("%s over %s: %v", tc.name, proto, err)
			}
			if r.Rcode != tc.rcode || len(r.Answer) != 0 {
				t.Errorf("%s over %s: %s with %d answers, want %s and none", tc.name, proto, dns.RcodeToString[r.Rcode], len(r.Answer), dns.RcodeToString[tc.rcode])
			}
		}
	}
}
