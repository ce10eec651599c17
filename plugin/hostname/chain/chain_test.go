package chain

import (
	"crypto"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Windows: every owner's signatures are valid at the hour they are made
// for, with at least Life-Step left; an owner's window moves once a Step,
// at an hour of its own, so a zone's renewals spread over the week.
func TestWindows(t *testing.T) {
	t.Parallel()
	start := Hour(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).UnixMilli())
	perHour := map[int64]int{}
	const owners = 2000
	for i := range owners {
		owner := fmt.Sprintf("h%06d.example.org.", i)
		renewals := 0
		for h := start; h < start+2*int64(stepHours); h++ {
			inc, exp := Window(owner, h)
			now := h * 3600
			if int64(inc) > now || int64(exp)-now < int64((Life-Step)/time.Second) {
				t.Fatalf("%s at hour %d: window %d..%d, now %d", owner, h, inc, exp, now)
			}
			if Renewed(owner, h, h+1) {
				renewals++
				perHour[(h+1)%int64(stepHours)]++
			}
		}
		if renewals != 2 {
			t.Errorf("%s renewed %d times in two weeks, want 2", owner, renewals)
		}
	}
	mean := 2 * owners / int(stepHours)
	for h, n := range perHour {
		if n > 3*mean {
			t.Errorf("%d renewals at hour %d of the week; mean %d", n, h, mean)
		}
	}
}

func testSigner(t testing.TB) (*Signer, crypto.Signer, *dns.DNSKEY) {
	t.Helper()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	return New("example.org.", k, priv.(crypto.Signer)), priv.(crypto.Signer), k
}

// Signatures are deterministic: two signers of one key (two nodes) make
// the same RRSIG for an RRset at an hour, found again or made again; and
// it verifies.
func TestSignaturesDeterministic(t *testing.T) {
	t.Parallel()
	s, priv, k := testSigner(t)
	other := New("example.org.", k, priv)
	rr, _ := dns.NewRR("h1.example.org. 60 IN A 192.0.2.1")
	hour := Hour(time.Now().UnixMilli())
	a, err := s.Sign([]dns.RR{rr}, hour)
	if err != nil {
		t.Fatal(err)
	}
	cached, _ := s.Sign([]dns.RR{rr}, hour)
	b, _ := other.Sign([]dns.RR{rr}, hour)
	if a.String() != b.String() || a.String() != cached.String() {
		t.Fatalf("signatures differ:\n%v\n%v\n%v", a, cached, b)
	}
	if err := a.Verify(k, []dns.RR{rr}); err != nil || !a.ValidityPeriod(time.Now()) {
		t.Fatalf("does not verify now: %v", err)
	}
	later, _ := s.Sign([]dns.RR{rr}, hour+int64(stepHours))
	if later.String() == a.String() {
		t.Error("a week later, the same window")
	}
}

// BenchmarkSign is one RRset signed for transfer, not found in the cache.
func BenchmarkSign(b *testing.B) {
	s, _, _ := testSigner(b)
	hour := Hour(time.Now().UnixMilli())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rr, _ := dns.NewRR(fmt.Sprintf("h%d.example.org. 60 IN A 192.0.2.1", i))
		if _, err := s.Sign([]dns.RR{rr}, hour); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignParallel is RRsets signed for transfer on every core.
func BenchmarkSignParallel(b *testing.B) {
	s, _, _ := testSigner(b)
	hour := Hour(time.Now().UnixMilli())
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rr, _ := dns.NewRR(fmt.Sprintf("h%d.example.org. 60 IN A 192.0.2.1", n.Add(1)))
			if _, err := s.Sign([]dns.RR{rr}, hour); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The pooled signing (rrsig.go) makes what validators check (miekg's
// Verify canonicalises on its own): sets of several records in any order,
// an owner in capitals, a large record, and a type it leaves to miekg.
func TestSignRRsetVerifies(t *testing.T) {
	t.Parallel()
	s, _, k := testSigner(t)
	hour := Hour(time.Now().UnixMilli())
	big := strings.Repeat("x", 250)
	for _, set := range [][]string{
		{"h1.example.org. 60 IN A 192.0.2.1"},
		{"H2.Example.ORG. 300 IN TXT \"b\"", "H2.Example.ORG. 300 IN TXT \"a\"", "H2.Example.ORG. 300 IN TXT \"c\""},
		{"t.example.org. 300 IN TXT \"" + big + "\" \"" + big + "\" \"" + big + "\""},
		{"m.example.org. 300 IN MX 10 Mail.Example.COM.", "m.example.org. 300 IN MX 5 a.example.com."},
		{"example.org. 60 IN NSEC a.example.org. A NS SOA RRSIG NSEC DNSKEY"},
	} {
		var rrs []dns.RR
		for _, text := range set {
			rr, err := dns.NewRR(text)
			if err != nil {
				t.Fatal(err)
			}
			rrs = append(rrs, rr)
		}
		sig, err := s.Sign(rrs, hour)
		if err != nil {
			t.Fatalf("%v: %v", set, err)
		}
		if err := sig.Verify(k, rrs); err != nil {
			t.Errorf("%s: does not verify: %v", set[0], err)
		}
	}
}

// BenchmarkSignAllocs is one RRset signed for transfer, not found in the
// cache: what it allocates (run it at most 65 536 times: -benchtime 4000x).
func BenchmarkSignAllocs(b *testing.B) {
	s, _, _ := testSigner(b)
	hour := Hour(time.Now().UnixMilli())
	rrs := make([][]dns.RR, 1<<16)
	for i := range rrs {
		rr, _ := dns.NewRR(fmt.Sprintf("h%d.example.org. 60 IN A 192.0.2.1", i))
		rrs[i] = []dns.RR{rr}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Sign(rrs[i%len(rrs)], hour); err != nil {
			b.Fatal(err)
		}
	}
}
