package sign

import (
	"crypto"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
)

// TestSignatureKeysSpread: the signature cache picks a shard by the key's
// low 8 bits and evicts at random when one is full, so keys of similar
// RRsets (names and addresses counted up, as in any pool) must spread
// evenly over them: 100 000 RRsets, no shard above twice the mean.
func TestSignatureKeysSpread(t *testing.T) {
	t.Parallel()
	const n = 100_000
	counts := make([]int, 256)
	for i := range n {
		owner := fmt.Sprintf("h%07d.example.org.", i)
		counts[RRsetKey(owner, dns.TypeA, []dns.RR{a(owner, i)})&255]++
	}
	if most := slices.Max(counts); most > 2*n/256 {
		t.Errorf("fullest shard holds %d keys; mean %d", most, n/256)
	}
}

func a(owner string, i int) *dns.A {
	return &dns.A{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
		A: net.IPv4(11, byte(i>>16), byte(i>>8), byte(i)).To4()}
}

func signer(t *testing.T) *Signer {
	t.Helper()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	return New("example.org.", k, priv.(crypto.Signer))
}

// Denials of random names, each its own signed NSEC, do not push the
// signatures of real RRsets out of the cache: signing those again makes
// none.
func TestDenialsKeepPositiveSignatures(t *testing.T) {
	s := signer(t)
	now := time.Now()
	full := func(rr dns.RR) uint32 { return rr.Header().Ttl }
	names := func() {
		for i := range 10 {
			owner := fmt.Sprintf("h%06d.example.org.", i)
			if out := s.Section([]dns.RR{a(owner, i)}, full, now); len(out) != 2 {
				t.Fatalf("%s signed as %v", owner, out)
			}
		}
	}
	names()
	before := s.cache.Len()
	for i := range 2 * denialCacheSize {
		s.Section([]dns.RR{NSEC(fmt.Sprintf("random%d.example.org.", i), nil, 60)}, full, now)
	}
	if got := s.cache.Len(); got != before {
		t.Errorf("the real RRsets' cache went from %d to %d under random names", before, got)
	}
	if got := s.denials.Len(); got > denialCacheSize {
		t.Errorf("the denials' cache holds %d, more than its %d", got, denialCacheSize)
	}
	signed := signatures()
	names()
	if n := signatures() - signed; n != 0 {
		t.Errorf("signing the real names again made %v signatures: theirs were evicted", n)
	}
}

// signatures reads coredns_hostname_signatures_total.
func signatures() float64 {
	var m dto.Metric
	made.Write(&m)
	return m.GetCounter().GetValue()
}
