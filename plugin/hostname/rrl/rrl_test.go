package rrl

import (
	"net/netip"
	"testing"
	"time"
)

func TestRRL(t *testing.T) {
	t.Parallel()
	r := New(3, 0, 0, 2)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	a := netip.MustParseAddr("192.0.2.7")
	neighbour := netip.MustParseAddr("192.0.2.200") // the same /24
	other := netip.MustParseAddr("198.41.0.4")
	ask := func(c netip.Addr) Verdict { return r.Take(c, Answer, "www.example.org.", 1) }
	var got []Verdict
	for range 3 {
		got = append(got, ask(a))
	}
	got = append(got, ask(neighbour), ask(a), ask(a))
	want := []Verdict{Send, Send, Send, Drop, Slip, Drop}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("verdicts %v, want %v (a burst of 3, then every 2nd refused one slips)", got, want)
		}
	}
	if v := ask(other); v != Send {
		t.Errorf("another network was limited too: %d", v)
	}
	now = now.Add(time.Second) // a second refills the allowance
	for i := range 3 {
		if v := ask(a); v != Send {
			t.Errorf("answer %d after a second: %d, want sent", i, v)
		}
	}
	v6 := New(1, 0, 0, 0)
	v6.now = r.now
	v6.Take(netip.MustParseAddr("2001:db8:0:1::1"), Error, "", 0)
	if v := v6.Take(netip.MustParseAddr("2001:db8:0:2::1"), Error, "", 0); v != Drop {
		t.Errorf("an IPv6 /56 neighbour got its own allowance: %d (slip 0 drops all)", v)
	}
}

// The cost response_rate_limit adds to an answer over UDP, from clients in
// a thousand networks at once.
func BenchmarkRRLVerdict(b *testing.B) {
	r := New(1_000_000_000, 0, 0, 2)
	addrs := make([]netip.Addr, 1000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{198, byte(i >> 8), byte(i), 7})
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Take(addrs[i%len(addrs)], Answer, "h0000001.example.org.", 1)
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
	r := New(2, 1, 3, 0)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	flood, resolver := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.8")
	for range 100 {
		r.Take(flood, NXDomain, "example.org.", 0) // random names: one zone
	}
	for i := range 2 {
		if v := r.Take(resolver, Answer, "www.example.org.", 1); v != Send {
			t.Errorf("the resolver's answer %d beside an NXDOMAIN flood: %d, want sent", i, v)
		}
	}
	if v := r.Take(resolver, NXDomain, "example.org.", 0); v != Drop {
		t.Errorf("an NXDOMAIN past the network's allowance of 1: %d, want dropped", v)
	}
	sent := 0
	for range 10 {
		if r.Take(flood, Error, "", 0) == Send {
			sent++
		}
	}
	if sent != 3 {
		t.Errorf("%d of 10 errors sent, want the errors' limit of 3", sent)
	}
	if v := r.Take(flood, Answer, "other.example.org.", 1); v != Send {
		t.Errorf("an answer of its own: %d, want sent", v)
	}
}
