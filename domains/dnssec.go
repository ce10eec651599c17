package domains

import (
	"crypto"
	"encoding/json"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// The zone's key: one combined signing key (flags 257), ECDSA P-256
// (algorithm 13), which every validating resolver supports.
const (
	KeyAlgorithm = dns.ECDSAP256SHA256
	keyBits      = 256
	keyTTL       = 3600
)

// applyDNSSEC turns signing on (a new key, sealed) or off, and records
// whether the parent publishes the DS.
func (s *Service) applyDNSSEC(d *storage.Domain, in Input) error {
	if in.DNSSEC != nil {
		switch {
		case *in.DNSSEC && !d.DNSSEC:
			if err := s.newKey(d); err != nil {
				return err
			}
		case !*in.DNSSEC && d.DNSSEC:
			if d.DSPublished && (in.DSPublished == nil || *in.DSPublished) {
				return apierror.Conflict("the parent publishes the DS of %s: remove it there and send ds_published false first, "+
					"or resolvers will fail to validate the unsigned zone", d.Name)
			}
			d.DNSSEC, d.DNSKEY, d.DNSSECKey, d.NSEC3 = false, "", "", false
			endRollover(d)
		}
	}
	if in.NSEC3 != nil {
		if *in.NSEC3 && !d.DNSSEC {
			return apierror.Conflict("domain %s is not signed; enable dnssec first (or with nsec3, in one request)", d.Name)
		}
		d.NSEC3 = *in.NSEC3
	}
	if in.DSPublished != nil {
		if *in.DSPublished && !d.DNSSEC {
			return apierror.Conflict("domain %s is not signed; enable dnssec first", d.Name)
		}
		d.DSPublished = *in.DSPublished
	}
	return nil
}

func (s *Service) newKey(d *storage.Domain) error {
	key, sealed, err := s.makeKey(d)
	if err != nil {
		return err
	}
	d.DNSSEC, d.DNSKEY, d.DNSSECKey, d.DSPublished = true, key, sealed, false
	return nil
}

// makeKey is a new key for d: its DNSKEY in presentation form and its
// private half sealed.
func (s *Service) makeKey(d *storage.Domain) (dnskey, sealed string, err error) {
	if len(s.key) == 0 {
		return "", "", apierror.NotImplemented("DNSSEC keys are encrypted at rest with cert_encryption_key_file, and this deployment has none configured")
	}
	k := &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(d.Name), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: keyTTL},
		Flags: 257, Protocol: 3, Algorithm: KeyAlgorithm,
	}
	priv, err := k.Generate(keyBits)
	if err != nil {
		return "", "", err
	}
	sealed, err = s.key.Seal([]byte(k.PrivateKeyString(priv)), KeyLabel(d.ID))
	if err != nil {
		return "", "", err
	}
	return k.String(), sealed, nil
}

// KeyLabel binds a sealed DNSSEC key to its domain.
func KeyLabel(domainID string) string { return "dnssec:" + domainID }

// KeyPair is a DNSKEY and its private key.
type KeyPair struct {
	DNSKEY *dns.DNSKEY
	Key    crypto.Signer
}

// Signer is a signed domain's keys, ready to sign: its key, and every key
// of its DNSKEY set, which holds a second key during a rollover; each key
// of the set signs every RRset (rollover.go).
type Signer struct {
	KeyPair
	Set []KeyPair
}

// OpenSigner unseals a signed domain's keys.
func OpenSigner(d *storage.Domain, key seal.Key) (*Signer, error) {
	cur, err := openKey(d, d.DNSKEY, d.DNSSECKey, key)
	if err != nil {
		return nil, err
	}
	s := &Signer{KeyPair: cur, Set: []KeyPair{cur}}
	if d.Rollover == "" {
		return s, nil
	}
	next, err := openKey(d, d.NextDNSKEY, d.NextDNSSECKey, key)
	if err != nil {
		return nil, err
	}
	s.Set = append(s.Set, next)
	return s, nil
}

func openKey(d *storage.Domain, dnskey, sealed string, key seal.Key) (KeyPair, error) {
	dk, err := parseKey(dnskey)
	if err != nil {
		return KeyPair{}, err
	}
	text, err := key.Open(sealed, KeyLabel(d.ID))
	if err != nil {
		return KeyPair{}, err
	}
	priv, err := dk.ReadPrivateKey(strings.NewReader(string(text)), d.Name)
	if err != nil {
		return KeyPair{}, err
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return KeyPair{}, apierror.Internal()
	}
	return KeyPair{DNSKEY: dk, Key: signer}, nil
}

func parseKey(text string) (*dns.DNSKEY, error) {
	rr, err := dns.NewRR(text)
	if err != nil {
		return nil, err
	}
	dk, ok := rr.(*dns.DNSKEY)
	if !ok {
		return nil, apierror.Internal()
	}
	return dk, nil
}

// DS is what the parent must publish for a signed domain (SHA-256 digest),
// in presentation form: its key's, and during a rollover the new key's
// too; nil when the domain is not signed.
func DS(d *storage.Domain) []string {
	var out []string
	for _, text := range []string{d.DNSKEY, d.NextDNSKEY} {
		if dk, err := parseKey(text); text != "" && err == nil {
			out = append(out, dk.ToDS(dns.SHA256).String())
		}
	}
	return out
}

// KeySet is what a signed domain's DNSKEY set holds, for telling one from
// another (its key, and a rollover's key and stage).
func KeySet(d *storage.Domain) string { return d.DNSKEY + "|" + d.NextDNSKEY + "|" + d.Rollover }

// CAA policy: a list of presentation strings, each `FLAGS TAG "VALUE"`.

// ParseCAA checks a CAA policy by the rules of a caller's CAA record
// (records.CAAPolicy) and returns its stored form (JSON).
func ParseCAA(entries []string) (string, error) {
	norm, err := records.CAAPolicy(entries)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(norm)
	return string(b), nil
}

// CAA reads a stored policy (nil when unset or cleared).
func CAA(d *storage.Domain) []string {
	var out []string
	if d.CAA != "" {
		json.Unmarshal([]byte(d.CAA), &out)
	}
	return out
}
