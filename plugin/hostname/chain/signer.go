package chain

import (
	"crypto"
	"encoding/base64"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// Signer signs one zone's RRsets for transfer with its key.
type Signer struct {
	zone   string
	dnskey *dns.DNSKEY
	key    crypto.Signer
	tag    uint16
	// signerWire is the zone's name in wire form, lowercase (RRSIG's
	// signer's name, as signed).
	signerWire []byte
	// others sign every RRset too: a rollover's other key.
	others []*Signer

	// The signatures made, by RRset and window (cache.go): a zone's second
	// AXFR, and an IXFR's statement of what a secondary holds, find them
	// here.
	mu    sync.Mutex
	cache *sigCache
}

// sigLen is the length of an ECDSA P-256 signature (RFC 6605), the only
// one a domain's key makes; another length is signed each time, not kept.
const sigLen = 64

// minCache is the least the cache holds before it is purged.
const minCache = 4096

// New is zone's transfer signer with key, whose public half is dnskey.
func New(zone string, dnskey *dns.DNSKEY, key crypto.Signer) *Signer {
	wire := make([]byte, 256)
	n, _ := dns.PackDomainName(dns.CanonicalName(zone), wire, 0, nil, false)
	return &Signer{zone: zone, dnskey: dnskey, key: deterministic{key}, tag: dnskey.KeyTag(), signerWire: wire[:n],
		cache: newSigCache(minCache)}
}

// Expect tells the cache how many RRsets the zone signs, so that it holds
// the whole zone (a second AXFR signs nothing) and an eighth more (the
// writes and renewals since) before it is purged.
func (s *Signer) Expect(rrsets int) {
	for _, o := range s.others { // a rollover's other key signs as many
		o.Expect(rrsets)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := rrsets + rrsets/8; want > s.cache.limit {
		c := newSigCache(want)
		for i := range s.cache.slots {
			if sl := &s.cache.slots[i]; sl.key != 0 {
				c.put(sl.key, sl.inception, sl.sig, 0)
			}
		}
		s.cache = c
	}
}

// deterministic makes the key sign with RFC 6979 nonces (crypto/ecdsa,
// given no randomness): the same RRset in the same window gets the same
// signature on every node and every time.
type deterministic struct{ crypto.Signer }

func (d deterministic) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return d.Signer.Sign(nil, digest, opts)
}

// WithOthers makes s sign every RRset with others too (a rollover's
// other key: sign.Signer.WithOthers), and returns it.
func (s *Signer) WithOthers(others []sign.Key) *Signer {
	for _, k := range others {
		s.others = append(s.others, New(s.zone, k.DNSKEY, k.Private))
	}
	return s
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
	b, ok := s.cache.get(key)
	s.mu.Unlock()
	if ok {
		sig.Signature = base64.StdEncoding.EncodeToString(b[:])
		return sig, nil
	}
	if err := s.signRRset(sig, rrs); err != nil {
		return nil, err
	}
	made.Inc()
	if raw, err := base64.StdEncoding.DecodeString(sig.Signature); err == nil && len(raw) == sigLen {
		// Every owner's window now started after hour-Step: one before it
		// is no transfer's any more.
		before := uint32((hour - stepHours) * int64(time.Hour/time.Second))
		s.mu.Lock()
		s.cache.put(key, inception, [sigLen]byte(raw), before-uint32(skew/time.Second))
		s.mu.Unlock()
	}
	return sig, nil
}

// Key is the private key the signer signs with.
func (s *Signer) Key() crypto.Signer { return s.key.(deterministic).Signer }

// DNSKEY is the zone's key (not to be modified).
func (s *Signer) DNSKEY() *dns.DNSKEY { return s.dnskey }
