package hostname

import (
	"hash/maphash"
	"unsafe"

	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/miekg/dns"
)

// A signed zone denies a missing name with a signed NSEC of the name's own
// (a black lie), so each missing name's denial is its own. fast_udp keeps
// the ones ServeDNS sends, as bytes around the question: the answer's
// header and its sections after the question, packed uncompressed (as
// write() sends them) so that they do not depend on where they stand. An
// entry is a name in the case it was asked (the NSEC's owner is written
// so), for one zone and one set of query flags, at one serial (the SOA's),
// and good until its first signature is due for renewal. (ServeDNS may
// sign the same denial again meanwhile, when its signature cache lets it
// go: another valid signature, the kept one no less valid.) They have a cache
// of their own, as their signatures have, so a flood of random names never
// evicts names' answers.

// denialWire is one name's denial, as bytes.
type denialWire struct {
	zone       uintptr // the *zone it was sent from: kept by address, not kept alive
	name       string  // the question's name on the wire, as asked
	flags      uint8
	serial     uint32
	until      int64 // Unix ms
	head, tail []byte
}

var denialSeed = maphash.MakeSeed()

type denialCache struct{ c *cache.Cache[*denialWire] }

func newDenialCache() *denialCache {
	return &denialCache{c: cache.New[*denialWire](denialCacheSize)}
}

func denialKey(z *zone, wireName []byte, flags uint8) uint64 {
	return maphash.Bytes(denialSeed, wireName) ^ mix64(uint64(uintptr(unsafe.Pointer(z)))^uint64(flags)<<56)
}

// get is the denial of the name wireName in z for flags, nil when none is
// kept or it is stale.
func (c *denialCache) get(z *zone, wireName []byte, flags uint8, serial uint32, now int64) *denialWire {
	e, ok := c.c.Get(denialKey(z, wireName, flags))
	if !ok || e.zone != uintptr(unsafe.Pointer(z)) || e.flags != flags || e.serial != serial || now >= e.until || e.name != string(wireName) {
		return nil
	}
	return e
}

// keepDenial keeps m, ServeDNS's signed denial of r's name in z (a name
// with no node), when its bytes do for every query of the name in the same
// case with the same flags: a plain query with DO, whatever its type but
// those answered otherwise (NSEC, RRSIG, DS, ANY), every RRset signed.
func (h *Handler) keepDenial(r, m *dns.Msg, z *zone) {
	flags, ok := wireFlags(r)
	if !ok || flags&wireDO == 0 || z.signer == nil || m.Rcode != dns.RcodeSuccess || m.Truncated || len(m.Answer) != 0 || len(m.Ns) == 0 {
		return
	}
	switch r.Question[0].Qtype {
	case dns.TypeNSEC, dns.TypeRRSIG, dns.TypeDS, dns.TypeANY:
		return
	}
	soa, ok := m.Ns[0].(*dns.SOA)
	if !ok || !allSigned(m.Ns) {
		return
	}
	for _, rr := range m.Extra {
		if o, ok := rr.(*dns.OPT); !ok || len(o.Option) > 0 {
			return
		}
	}
	until := renewedBy(m.Ns, 0)
	c := m.Copy()
	c.Id, c.RecursionDesired, c.CheckingDisabled, c.Compress = 0, false, false, false
	b, err := c.Pack()
	if err != nil || len(b) > maxUDPSize {
		return
	}
	name := make([]byte, 255)
	n, err := dns.PackDomainName(r.Question[0].Name, name, 0, nil, false)
	if err != nil || len(b) < 12+n+4 {
		return
	}
	name = name[:n]
	h.denials.c.Add(denialKey(z, name, flags), &denialWire{zone: uintptr(unsafe.Pointer(z)), name: string(name), flags: flags, serial: soa.Serial, until: until,
		head: b[:12], tail: b[12+n+4:]})
}
