package answer

import (
	"crypto"
	"net/netip"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// A signed answer missing a signature (signing failed) is sent, never kept.
func TestKeepsOnlySigned(t *testing.T) {
	t.Parallel()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	z := &index.Zone{Name: "example.org.", Kind: index.KindPool, Names: index.NewTable(0), Signed: true,
		Signer: sign.New("example.org.", k, priv.(crypto.Signer))}
	ix := index.New(nil, "")
	ix.SetZones(index.Set{z.Name: z})
	n := &index.Node{Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr("198.51.0.0")})}
	ix.Put("h000000.example.org.", n)
	a := New(Config{}, ix)

	q := new(dns.Msg)
	q.SetQuestion("h000000.example.org.", dns.TypeA)
	q.SetEdns0(1232, true)
	m := new(dns.Msg)
	m.SetReply(q)
	m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "h000000.example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{198, 51, 0, 0}}}
	m.SetEdns0(1232, true)
	var wire [256]byte
	ask, _ := AskOf(q, request.Request{W: &test.ResponseWriter{}, Req: q}, &wire)
	if a.keep(a.pack(m, &ask, true), m, &ask, z, n) {
		t.Error("an unsigned answer of a signed zone would be kept for DO queries")
	}
}
