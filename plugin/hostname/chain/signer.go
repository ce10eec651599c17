package chain

import (
	"crypto"
	"encoding/base64"
	"io"
	"strings"
	"sync"

	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// Signer signs one zone's RRsets for transfer with its key.
type Signer struct {
	zone   string
	dnskey *dns.DNSKEY
	key    crypto.Signer
	tag    uint16

	// The signatures made, by RRset and window: a zone's second AXFR, and
	// an IXFR's statement of what a secondary holds, find them here. Two
	// generations: when the newer holds limit, it becomes the older and
	// the older is dropped, so signatures of content and windows long gone
	// leave by themselves while the zone's live ones are kept.
	mu        sync.Mutex
	cur, prev map[uint64][sigLen]byte
	limit     int
}

// sigLen is the length of an ECDSA P-256 signature (RFC 6605), the only
// one a domain's key makes; another length is signed each time, not kept.
const sigLen = 64

// minCache is the least a generation holds before it turns over.
const minCache = 4096

// New is zone's transfer signer with key, whose public half is dnskey.
func New(zone string, dnskey *dns.DNSKEY, key crypto.Signer) *Signer {
	return &Signer{zone: zone, dnskey: dnskey, key: deterministic{key}, tag: dnskey.KeyTag(),
		cur: map[uint64][sigLen]byte{}, limit: minCache}
}

// Expect tells the cache how many RRsets the zone signs, so a generation
// holds the whole zone (a second AXFR signs nothing) and an eighth more
// (the writes and renewals since), before it turns over.
func (s *Signer) Expect(rrsets int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = max(minCache, rrsets+rrsets/8)
	if len(s.cur) == 0 {
		// Made at its size: a map grown to it by doubling holds twice the
		// memory (a million names' signatures, 170 bytes each against 85).
		s.cur = make(map[uint64][sigLen]byte, s.limit)
	}
}

// deterministic makes the key sign with RFC 6979 nonces (crypto/ecdsa,
// given no randomness): the same RRset in the same window gets the same
// signature on every node and every time.
type deterministic struct{ crypto.Signer }

func (d deterministic) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return d.Signer.Sign(nil, digest, opts)
}

// Sign is the RRSIG over rrs (one RRset, owner lowercase, TTL as
// transferred) in the window of its owner at hour.
func (s *Signer) Sign(rrs []dns.RR, hour int64) (*dns.RRSIG, error) {
	hdr := rrs[0].Header()
	owner := strings.ToLower(hdr.Name)
	inception, expiration := Window(owner, hour)
	sig := &dns.RRSIG{
		Hdr:         dns.RR_Header{Name: hdr.Name, Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: hdr.Ttl},
		TypeCovered: hdr.Rrtype,
		Algorithm:   s.dnskey.Algorithm,
		Labels:      uint8(dns.CountLabel(owner)),
		OrigTtl:     hdr.Ttl,
		Expiration:  expiration,
		Inception:   inception,
		KeyTag:      s.tag,
		SignerName:  s.zone,
	}
	if strings.HasPrefix(owner, "*.") {
		sig.Labels-- // RFC 4034 3.1.3 (no wildcards are served, but the rule is the rule)
	}
	key := sign.RRsetKey(owner, hdr.Rrtype, rrs) ^ sign.Mix64(uint64(hdr.Ttl)<<32|uint64(inception))
	s.mu.Lock()
	b, ok := s.cur[key]
	if !ok {
		if b, ok = s.prev[key]; ok {
			s.keep(key, b)
		}
	}
	s.mu.Unlock()
	if ok {
		sig.Signature = base64.StdEncoding.EncodeToString(b[:])
		return sig, nil
	}
	if err := sig.Sign(s.key, rrs); err != nil {
		return nil, err
	}
	made.Inc()
	if raw, err := base64.StdEncoding.DecodeString(sig.Signature); err == nil && len(raw) == sigLen {
		s.mu.Lock()
		s.keep(key, [sigLen]byte(raw))
		s.mu.Unlock()
	}
	return sig, nil
}

// keep puts a signature in the newer generation, turning it over when
// full. The caller holds mu.
func (s *Signer) keep(key uint64, b [sigLen]byte) {
	if len(s.cur) >= s.limit {
		s.prev, s.cur = s.cur, make(map[uint64][sigLen]byte, s.limit) // see Expect
	}
	s.cur[key] = b
}

// Key is the private key the signer signs with.
func (s *Signer) Key() crypto.Signer { return s.key.(deterministic).Signer }

// DNSKEY is the zone's key (not to be modified).
func (s *Signer) DNSKEY() *dns.DNSKEY { return s.dnskey }
