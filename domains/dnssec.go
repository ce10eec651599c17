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
	if len(s.key) == 0 {
		return apierror.NotImplemented("DNSSEC keys are encrypted at rest with cert_encryption_key_file, and this deployment has none configured")
	}
	k := &dns.DNSKEY{
		Hdr:   dns.RR_Header{Name: dns.Fqdn(d.Name), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: keyTTL},
		Flags: 257, Protocol: 3, Algorithm: KeyAlgorithm,
	}
	priv, err := k.Generate(keyBits)
	if err != nil {
		return err
	}
	sealed, err := s.key.Seal([]byte(k.PrivateKeyString(priv)), KeyLabel(d.ID))
	if err != nil {
		return err
	}
	d.DNSSEC, d.DNSKEY, d.DNSSECKey, d.DSPublished = true, k.String(), sealed, false
	return nil
}

// KeyLabel binds a sealed DNSSEC key to its domain.
func KeyLabel(domainID string) string { return "dnssec:" + domainID }

// Signer is a domain's DNSKEY and private key, ready to sign.
type Signer struct {
	DNSKEY *dns.DNSKEY
	Key    crypto.Signer
}

// OpenSigner unseals a signed domain's key.
func OpenSigner(d *storage.Domain, key seal.Key) (*Signer, error) {
	rr, err := dns.NewRR(d.DNSKEY)
	if err != nil {
		return nil, err
	}
	dk, ok := rr.(*dns.DNSKEY)
	if !ok {
		return nil, apierror.Internal()
	}
	text, err := key.Open(d.DNSSECKey, KeyLabel(d.ID))
	if err != nil {
		return nil, err
	}
	priv, err := dk.ReadPrivateKey(strings.NewReader(string(text)), d.Name)
	if err != nil {
		return nil, err
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, apierror.Internal()
	}
	return &Signer{DNSKEY: dk, Key: signer}, nil
}

// DS is what the parent must publish for a signed domain (SHA-256 digest),
// in presentation form; nil when the domain is not signed.
func DS(d *storage.Domain) []string {
	if d.DNSKEY == "" {
		return nil
	}
	rr, err := dns.NewRR(d.DNSKEY)
	if err != nil {
		return nil
	}
	dk, ok := rr.(*dns.DNSKEY)
	if !ok {
		return nil
	}
	return []string{dk.ToDS(dns.SHA256).String()}
}

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
