package chain

import (
	"strings"

	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// Denial is how a signed zone proves what it does not hold, to secondaries:
// an NSEC chain over its names in canonical order, or an NSEC3 chain over
// their hashes (RFC 5155) with RFC 9276's parameters: SHA-1, no extra
// iterations, no salt, no opt-out. A name's place in the chain is its key:
// the name itself for NSEC; for NSEC3, its hash (base32hex, which sorts as
// the hash does) and then the name, so a key leads back to its name.
type Denial struct {
	Zone  string // the apex, lowercase FQDN
	NSEC3 bool
}

// hashLen is the length of a SHA-1 hash in base32hex.
const hashLen = 32

// Key is name's place in the chain.
func (d Denial) Key(name string) string {
	if !d.NSEC3 {
		return name
	}
	return dns.HashName(name, dns.SHA1, 0, "") + name
}

// Name is the name whose key is key.
func (d Denial) Name(key string) string {
	if !d.NSEC3 {
		return key
	}
	return key[hashLen:]
}

// Owner is the owner name of the chain record of key: the name (NSEC),
// or its hash's label in the zone (NSEC3).
func (d Denial) Owner(key string) string {
	if !d.NSEC3 {
		return key
	}
	return strings.ToLower(key[:hashLen]) + "." + d.Zone
}

// Compare orders keys as the chain runs.
func (d Denial) Compare(a, b string) int {
	if !d.NSEC3 {
		return Compare(a, b)
	}
	return strings.Compare(a, b)
}

// Member reports whether a name is in the chain: for NSEC, one that holds
// records; for NSEC3, also an empty non-terminal (RFC 5155 7.1).
func (d Denial) Member(exists, holds bool) bool {
	return holds || d.NSEC3 && exists
}

// Record is the chain's record for the name of key: types are what the
// name holds; next the key after it (the first after the last). NSEC3
// lists RRSIG only where there are signatures, an empty non-terminal
// nothing.
func (d Denial) Record(key, next string, types []uint16, ttl uint32) dns.RR {
	if !d.NSEC3 {
		return NSEC(key, next, types, ttl)
	}
	bitmap := sign.Bitmap(types)
	if len(types) > 0 {
		bitmap = sign.Bitmap(types, dns.TypeRRSIG)
	}
	return &dns.NSEC3{
		Hdr:        dns.RR_Header{Name: d.Owner(key), Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: ttl},
		Hash:       dns.SHA1,
		HashLength: 20,
		NextDomain: next[:hashLen],
		TypeBitMap: bitmap,
	}
}

// Param is the apex's NSEC3PARAM (nil for NSEC): what a secondary
// answers with, and hashes by, for names it denies.
func (d Denial) Param() dns.RR {
	if !d.NSEC3 {
		return nil
	}
	return &dns.NSEC3PARAM{Hdr: dns.RR_Header{Name: d.Zone, Rrtype: dns.TypeNSEC3PARAM, Class: dns.ClassINET, Ttl: 0}, Hash: dns.SHA1}
}
