// Package sign signs a zone's answers online, after CoreDNS's dnssec
// plugin: every RRset is signed when it is first answered and the
// signature is kept until it nears expiry.
package sign

import (
	"crypto"
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/miekg/dns"
)

// Denial is by "black lies" (RFC 4470 minimally covering NSEC, as the
// dnssec plugin does): a name that does not exist is answered NODATA with an
// NSEC at the name itself, listing only NSEC and RRSIG; a name that exists
// gets an NSEC listing its types. No zone walk is possible, nothing is
// precomputed, and answers stay O(1).

// Signature lifetimes.
const (
	Validity = 7 * 24 * time.Hour
	Refresh  = 3 * 24 * time.Hour // re-sign when less than this is left
	skew     = time.Hour          // inception in the past, for clocks behind ours
)

// Signer signs one zone's RRsets with its key.
type Signer struct {
	zone   string
	dnskey *dns.DNSKEY
	key    crypto.Signer
	tag    uint16
	// Bounded (random eviction), so that queries for endless random names
	// cannot grow it without limit.
	cache *cache.Cache[*dns.RRSIG] // hash of the RRset -> signature
	// denials keeps the signatures of the NSECs that deny a name exists
	// apart: queries for endless random names (each its own NSEC, each a
	// signature) churn this cache only, never the one the zone's real
	// RRsets are answered from.
	denials *cache.Cache[*dns.RRSIG]
	// others are the DNSKEY set's other keys during a rollover: each signs
	// every RRset too (RFC 6781 4.1.1.2's double signatures), so a
	// validator holding either key, by the parent's DS or its cache,
	// validates every answer.
	others []Key
}

// Key is a DNSKEY and its private half.
type Key struct {
	DNSKEY  *dns.DNSKEY
	Private crypto.Signer
}

// WithOthers makes s sign every RRset with others too, and returns it.
func (s *Signer) WithOthers(others []Key) *Signer {
	s.others = others
	return s
}

// Set is the zone's DNSKEY set: the key that signs, then the others.
func (s *Signer) Set() []*dns.DNSKEY {
	set := []*dns.DNSKEY{s.dnskey}
	for _, k := range s.others {
		set = append(set, k.DNSKEY)
	}
	return set
}

// sigCacheSize is how many signatures of existing RRsets a zone keeps, and
// denialCacheSize how many of its denials.
const (
	sigCacheSize    = 250_000
	denialCacheSize = 50_000
)

// New is zone's signer with key, whose public half is dnskey.
func New(zone string, dnskey *dns.DNSKEY, key crypto.Signer) *Signer {
	return &Signer{zone: zone, dnskey: dnskey, key: key, tag: dnskey.KeyTag(),
		cache: cache.New[*dns.RRSIG](sigCacheSize), denials: cache.New[*dns.RRSIG](denialCacheSize)}
}

// cacheOf is the cache rrs's signature goes to: a name's denial (an NSEC
// that lists nothing but itself and its RRSIG) to denials.
func (s *Signer) cacheOf(rrs []dns.RR) *cache.Cache[*dns.RRSIG] {
	if n, ok := rrs[0].(*dns.NSEC); ok && len(rrs) == 1 && len(n.TypeBitMap) == 2 {
		return s.denials
	}
	return s.cache
}

// sign returns the RRSIG over rrs (one RRset), owner and TTL as served.
// The signature is made over the canonical form (lowercase owner, the
// RRset's full TTL), so a TTL shortened at answer time or the client's case
// in the owner name do not make a new signature.
func (s *Signer) sign(rrs []dns.RR, fullTTL uint32, now time.Time) *dns.RRSIG {
	return s.signWith(Key{s.dnskey, s.key}, s.tag, rrs, fullTTL, now)
}

// signWith is sign with key k, whose tag is tag.
func (s *Signer) signWith(k Key, tag uint16, rrs []dns.RR, fullTTL uint32, now time.Time) *dns.RRSIG {
	hdr := rrs[0].Header()
	owner := strings.ToLower(hdr.Name)
	key := RRsetKey(owner, hdr.Rrtype, rrs) ^ Mix64(uint64(tag))
	c := s.cacheOf(rrs)
	if sig, ok := c.Get(key); ok && time.Unix(int64(sig.Expiration), 0).Sub(now) > Refresh {
		return asServed(sig, hdr)
	}
	canon := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		c := dns.Copy(rr)
		c.Header().Name, c.Header().Ttl = owner, fullTTL
		canon[i] = c
	}
	sig := &dns.RRSIG{
		Hdr:        dns.RR_Header{Name: owner, Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: fullTTL},
		Algorithm:  k.DNSKEY.Algorithm,
		SignerName: s.zone,
		KeyTag:     tag,
		OrigTtl:    fullTTL,
		Inception:  uint32(now.Add(-skew).Unix()),
		Expiration: uint32(now.Add(Validity).Unix()),
	}
	if err := sig.Sign(k.Private, canon); err != nil {
		log.Errorf("signing %s %s: %v", owner, dns.TypeToString[hdr.Rrtype], err)
		return nil
	}
	made.Inc()
	c.Add(key, sig)
	return asServed(sig, hdr)
}

// RRsetKey identifies an RRset's content (owner, type, rdata) whatever its
// TTL: FNV-1a over the wire-form rdata, packed into a pooled buffer, so the
// answer path neither formats text nor allocates for it.
func RRsetKey(owner string, t uint16, rrs []dns.RR) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	add := func(b byte) { h = (h ^ uint64(b)) * prime }
	for i := 0; i < len(owner); i++ {
		add(owner[i])
	}
	add(byte(t >> 8))
	add(byte(t))
	bp := packBufs.Get().(*[]byte)
	defer packBufs.Put(bp)
	for _, rr := range rrs {
		end, err := dns.PackRR(rr, *bp, 0, nil, false)
		if err != nil { // larger than the buffer: hash its text instead
			text := rr.String()[len(rr.Header().String()):]
			for i := 0; i < len(text); i++ {
				add(text[i])
			}
			continue
		}
		for _, b := range (*bp)[end-int(rr.Header().Rdlength) : end] {
			add(b)
		}
		add(0xff) // between records
	}
	// FNV's low bits depend on the input's low bits only, and the cache
	// picks its shard by the low 8: finish with a mixer so that similar
	// RRsets spread evenly instead of overflowing a few shards.
	return Mix64(h)
}

// Mix64 is splitmix64's finaliser: every input bit moves every output bit,
// so keys that differ in a few bits (counted-up names, nearby addresses)
// spread over a cache's shards, which are picked by the low 8 bits.
func Mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

var packBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// asServed is a copy of sig with the owner and TTL of the answered RRset.
func asServed(sig *dns.RRSIG, hdr *dns.RR_Header) *dns.RRSIG {
	c := *sig
	c.Hdr.Name, c.Hdr.Ttl = hdr.Name, hdr.Ttl
	return &c
}

// Section appends an RRSIG to rrs for each RRset in it. fullTTL gives
// the TTL an RRset is signed with (its served TTL unless that was shortened).
func (s *Signer) Section(rrs []dns.RR, fullTTL func(dns.RR) uint32, now time.Time) []dns.RR {
	out := rrs
	for i := 0; i < len(rrs); {
		j := i + 1
		for j < len(rrs) && rrs[j].Header().Rrtype == rrs[i].Header().Rrtype &&
			strings.EqualFold(rrs[j].Header().Name, rrs[i].Header().Name) {
			j++
		}
		if t := rrs[i].Header().Rrtype; t != dns.TypeRRSIG && t != dns.TypeOPT {
			if sig := s.sign(rrs[i:j], fullTTL(rrs[i]), now); sig != nil {
				out = append(out, sig)
			}
			for _, k := range s.others {
				if sig := s.signWith(k, k.DNSKEY.KeyTag(), rrs[i:j], fullTTL(rrs[i]), now); sig != nil {
					out = append(out, sig)
				}
			}
		}
		i = j
	}
	return out
}

// DNSKEY is the zone's key, as signed with (not to be modified).
func (s *Signer) DNSKEY() *dns.DNSKEY { return s.dnskey }
