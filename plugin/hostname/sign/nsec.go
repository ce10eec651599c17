package sign

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// TypeNXNAME is RFC 9824's pseudo-type: in a compact denial's NSEC it says
// the name does not exist at all. A query of it is refused (FORMERR).
const TypeNXNAME uint16 = 128

// NSEC is the minimally covering NSEC at owner: it proves the types at the
// name (none for a name that does not exist) and that nothing else is there.
// Its TTL is the SOA's MINIMUM, as a denial's SOA is (RFC 9077).
func NSEC(owner string, types []uint16, ttl uint32) *dns.NSEC {
	return &dns.NSEC{
		Hdr:        dns.RR_Header{Name: owner, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: successor(strings.ToLower(owner)), // in the case it is signed in, whichever canonical form a validator takes (RFC 6840 5.1)
		TypeBitMap: Bitmap(types, dns.TypeRRSIG, dns.TypeNSEC),
	}
}

// Bitmap is an NSEC's (or NSEC3's) type list: types and with, sorted,
// each once.
func Bitmap(types []uint16, with ...uint16) []uint16 {
	out := append(append(make([]uint16, 0, len(types)+len(with)), types...), with...)
	slices.Sort(out)
	return slices.Compact(out)
}

// successor is the name right after owner in canonical order (RFC 4034
// 6.1) that fits in a name, as RFC 4471 3.1.2 makes it: a \000 label in
// front of it, or for a name too long for one more label, its first
// label's last octet that can be raised raised by one (past the
// uppercase letters, which sort as lowercase) and the octets after it
// dropped; a label of nothing but 0xff is dropped and the next one raised.
func successor(owner string) string {
	next := "\\000." + owner
	buf := make([]byte, 256)
	end, err := dns.PackDomainName(dns.CanonicalName(owner), buf, 0, nil, false)
	if err != nil || end+2 <= 255 { // room for a label of one octet
		return next
	}
	wire := buf[:end]
	for off := 0; wire[off] != 0; {
		n := int(wire[off])
		label := wire[off+1 : off+1+n]
		for i := n - 1; i >= 0; i-- {
			if label[i] == 0xff {
				continue
			}
			label[i]++
			if label[i] == 'A' {
				label[i] = 'Z' + 1
			}
			// The label up to the raised octet, then the rest of the name.
			out := append([]byte{}, wire[:off]...)
			out = append(out, byte(i+1))
			out = append(out, label[:i+1]...)
			out = append(out, wire[off+1+n:]...)
			if name, _, err := dns.UnpackDomainName(out, 0); err == nil {
				return name
			}
			return next
		}
		// Nothing but 0xff: the label goes, and the next one is raised.
		wire = append(wire[:off], wire[off+1+n:]...)
	}
	return next
}
