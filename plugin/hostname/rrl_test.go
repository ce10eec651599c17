package hostname

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

func TestRRL(t *testing.T) {
	t.Parallel()
	r := newRRL(3, 0, 0, 2)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	a := netip.MustParseAddr("192.0.2.7")
	neighbour := netip.MustParseAddr("192.0.2.200") // the same /24
	other := netip.MustParseAddr("198.41.0.4")
	ask := func(c netip.Addr) int { return r.verdict(c, rrlAnswer, "www.example.org.", 1) }
	var got []int
	for range 3 {
		got = append(got, ask(a))
	}
	got = append(got, ask(neighbour), ask(a), ask(a))
	want := []int{rrlSend, rrlSend, rrlSend, rrlDrop, rrlSlip, rrlDrop}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("verdicts %v, want %v (a burst of 3, then every 2nd refused one slips)", got, want)
		}
	}
	if v := ask(other); v != rrlSend {
		t.Errorf("another network was limited too: %d", v)
	}
	now = now.Add(time.Second) // a second refills the allowance
	for i := range 3 {
		if v := ask(a); v != rrlSend {
			t.Errorf("answer %d after a second: %d, want sent", i, v)
		}
	}
	v6 := newRRL(1, 0, 0, 0)
	v6.now = r.now
	v6.verdict(netip.MustParseAddr("2001:db8:0:1::1"), rrlError, "", 0)
	if v := v6.verdict(netip.MustParseAddr("2001:db8:0:2::1"), rrlError, "", 0); v != rrlDrop {
		t.Errorf("an IPv6 /56 neighbour got its own allowance: %d (slip 0 drops all)", v)
	}
}

// The cost response_rate_limit adds to an answer over UDP, from clients in
// a thousand networks at once.
func BenchmarkRRLVerdict(b *testing.B) {
	r := newRRL(1_000_000_000, 0, 0, 2)
	addrs := make([]netip.Addr, 1000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{198, byte(i >> 8), byte(i), 7})
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.verdict(addrs[i%len(addrs)], rrlAnswer, "h0000001.example.org.", 1)
			i++
		}
	})
}

// Each response is counted with its network and what it is: random names
// that do not exist use up their zone's NXDOMAIN allowance, not the one of
// an answer a neighbour asks for; errors have their own; each class has
// its limit.
func TestRRLClasses(t *testing.T) {
	t.Parallel()
	r := newRRL(2, 1, 3, 0)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	flood, resolver := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.8")
	for range 100 {
		r.verdict(flood, rrlNXDomain, "example.org.", 0) // random names: one zone
	}
	for i := range 2 {
		if v := r.verdict(resolver, rrlAnswer, "www.example.org.", 1); v != rrlSend {
			t.Errorf("the resolver's answer %d beside an NXDOMAIN flood: %d, want sent", i, v)
		}
	}
	if v := r.verdict(resolver, rrlNXDomain, "example.org.", 0); v != rrlDrop {
		t.Errorf("an NXDOMAIN past the network's allowance of 1: %d, want dropped", v)
	}
	sent := 0
	for range 10 {
		if r.verdict(flood, rrlError, "", 0) == rrlSend {
			sent++
		}
	}
	if sent != 3 {
		t.Errorf("%d of 10 errors sent, want the errors' limit of 3", sent)
	}
	if v := r.verdict(flood, rrlAnswer, "other.example.org.", 1); v != rrlSend {
		t.Errorf("an answer of its own: %d, want sent", v)
	}
}

// A signed zone denies a random name with NOERROR and an NSEC of its own:
// those denials share the zone's allowance, as NXDOMAINs do, so a flood
// of random names with DO draws no more than the limit either.
func TestRRLSignedDenials(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 3, true)
	h.answers.rrl = newRRL(5, 0, 0, 0)
	full := 0
	for i := range 200 {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("random%d.example.org.", i), dns.TypeA)
		m.SetEdns0(1232, true)
		rec := dnstest.NewRecorder(&test.ResponseWriter{}) // over UDP
		h.ServeDNS(context.Background(), rec, m)
		if rec.Msg != nil && !rec.Msg.Truncated {
			full++
		}
	}
	if full > 6 {
		t.Errorf("%d of 200 signed denials of random names sent, want the limit of 5", full)
	}
}
