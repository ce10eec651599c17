package hostname

import (
	"net/netip"
	"testing"
	"time"
)

func TestRRL(t *testing.T) {
	t.Parallel()
	r := newRRL(3, 2)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	a := netip.MustParseAddr("192.0.2.7")
	neighbour := netip.MustParseAddr("192.0.2.200") // the same /24
	other := netip.MustParseAddr("198.41.0.4")
	var got []int
	for range 3 {
		got = append(got, r.verdict(a))
	}
	got = append(got, r.verdict(neighbour), r.verdict(a), r.verdict(a))
	want := []int{rrlSend, rrlSend, rrlSend, rrlDrop, rrlSlip, rrlDrop}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("verdicts %v, want %v (a burst of 3, then every 2nd refused one slips)", got, want)
		}
	}
	if v := r.verdict(other); v != rrlSend {
		t.Errorf("another network was limited too: %d", v)
	}
	now = now.Add(time.Second) // a second refills the allowance
	for i := range 3 {
		if v := r.verdict(a); v != rrlSend {
			t.Errorf("answer %d after a second: %d, want sent", i, v)
		}
	}
	v6 := newRRL(1, 0)
	v6.now = r.now
	v6.verdict(netip.MustParseAddr("2001:db8:0:1::1"))
	if v := v6.verdict(netip.MustParseAddr("2001:db8:0:2::1")); v != rrlDrop {
		t.Errorf("an IPv6 /56 neighbour got its own allowance: %d (slip 0 drops all)", v)
	}
}

// The cost response_rate_limit adds to an answer over UDP, from clients in
// a thousand networks at once.
func BenchmarkRRLVerdict(b *testing.B) {
	r := newRRL(1_000_000_000, 2)
	addrs := make([]netip.Addr, 1000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{198, byte(i >> 8), byte(i), 7})
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.verdict(addrs[i%len(addrs)])
			i++
		}
	})
}
