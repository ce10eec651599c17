package index

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
)

// orderZone is a signed zone of n hostnames (a Chain is all orderFor
// looks at), denying by NSEC3 or not.
func orderZone(n int, nsec3 bool) *Zone {
	z := &Zone{Name: "example.org.", Names: NewTable(n), Chain: &chain.Signer{}, NSEC3: nsec3}
	for i := range n {
		z.Names.Put(fmt.Sprintf("h%07d.example.org.", i), &Node{Owner: uint64(i), Host: true,
			Addrs: PackAddrs([]netip.Addr{netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)})})})
	}
	return z
}

// BenchmarkKeepOrder is what a signed zone's chain costs to build, at a
// load or when signing is turned on: 100 000 names, NSEC and NSEC3.
func BenchmarkKeepOrder(b *testing.B) {
	for _, nsec3 := range []bool{false, true} {
		z := orderZone(100_000, nsec3)
		b.Run(fmt.Sprintf("nsec3=%v", nsec3), func(b *testing.B) {
			for b.Loop() {
				z.Names.order = nil
				z.Names.order, _ = z.Names.orderFor(z, []string{z.Name})
			}
		})
	}
}

// BenchmarkOrderedPut is a write's cost to a signed zone's chain: a name
// put into a zone of 100 000 and dropped again.
func BenchmarkOrderedPut(b *testing.B) {
	for _, nsec3 := range []bool{false, true} {
		z := orderZone(100_000, nsec3)
		z.Names.order, _ = z.Names.orderFor(z, []string{z.Name})
		nd := &Node{Owner: 1 << 40, Host: true, Addrs: PackAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.1")})}
		b.Run(fmt.Sprintf("nsec3=%v", nsec3), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				name := fmt.Sprintf("x%d.example.org.", i%1000)
				z.Names.Put(name, nd)
				z.Names.drop(name, nd.Owner)
			}
		})
	}
}
