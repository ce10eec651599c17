package e2e

import (
	"testing"

	"github.com/miekg/dns"
)

// A nameserver named again with an address of the other family is one
// nameserver with two addresses: one NS record, each address once in the
// glue and at its name (RFC 2181 5: an RRset holds no duplicates), and a
// name repeated with the same address is that address once.
func TestNameserverNamedTwice(t *testing.T) {
	s := start(t, options{extra: []string{
		"nameserver ns1.example.org [::1]:53",
		"nameserver ns1.example.org 127.0.0.1:53", // the harness names it with this address too
		"nameserver ns2.example.net",
	}})
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeNS)
	c := &dns.Client{Net: "tcp"}
	r, _, err := c.Exchange(m, s.dnsAddr)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, rr := range r.Answer {
		ns = append(ns, rr.(*dns.NS).Ns)
	}
	glue := map[string]int{}
	for _, rr := range r.Extra {
		glue[rr.String()]++
	}
	if len(ns) != 2 || ns[0] != "ns1.example.org." || ns[1] != "ns2.example.net." {
		t.Errorf("NS %v, want ns1.example.org. and ns2.example.net. once each", ns)
	}
	if len(glue) != 2 || len(r.Extra) != 2 {
		t.Errorf("glue %v, want ns1's A and AAAA once each", r.Extra)
	}
	for qtype, want := range map[uint16]int{dns.TypeA: 1, dns.TypeAAAA: 1} {
		if got := addrs(s.query("ns1.example.org", qtype, "udp")); len(got) != want {
			t.Errorf("ns1.example.org %s: %v, want %d address", dns.TypeToString[qtype], got, want)
		}
	}
}
