package chain

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// A zone's transfer signs every RRset in it, two million at a million
// names, and miekg's RRSIG.Sign allocates 4 KB and copies of every record
// for each: at that rate the garbage, not the signing, sets the server's
// memory. This signs the RRsets a zone is made of (records whose data
// holds no name that canonical form lowercases, RFC 4034 6.2) into one
// pooled buffer, and leaves the rest (MX, SRV, NS, SOA: a few a zone) and
// any key but ECDSA P-256 to miekg. The bytes signed are RFC 4034 3.1.8.1's
// either way, and the tests verify what each makes with miekg's Verify.

// lowered are the types whose data canonical form lowercases (miekg's
// list, after RFC 4034 6.2 and RFC 6840 5.1): signed by miekg.
var lowered = map[uint16]bool{
	dns.TypeNS: true, dns.TypeMD: true, dns.TypeMF: true, dns.TypeCNAME: true, dns.TypeSOA: true,
	dns.TypeMB: true, dns.TypeMG: true, dns.TypeMR: true, dns.TypePTR: true, dns.TypeMINFO: true,
	dns.TypeMX: true, dns.TypeRP: true, dns.TypeAFSDB: true, dns.TypeRT: true, dns.TypeSIG: true,
	dns.TypePX: true, dns.TypeNAPTR: true, dns.TypeKX: true, dns.TypeSRV: true, dns.TypeDNAME: true,
}

var signBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// errDER is a signature the key made that is not ECDSA's DER.
var errDER = errors.New("chain: the key's signature is not an ECDSA DER sequence")

// signRRset fills sig.Signature over rrs (one RRset, owner as given, TTL
// the sig's OrigTtl), sig's other fields set.
func (s *Signer) signRRset(sig *dns.RRSIG, rrs []dns.RR) error {
	owner := rrs[0].Header().Name
	if s.dnskey.Algorithm != dns.ECDSAP256SHA256 || lowered[sig.TypeCovered] || strings.HasPrefix(owner, "*") {
		return sig.Sign(s.key, rrs)
	}
	bp := signBufs.Get().(*[]byte)
	defer signBufs.Put(bp)
	b := append((*bp)[:0], byte(sig.TypeCovered>>8), byte(sig.TypeCovered), sig.Algorithm, sig.Labels)
	b = be32(b, sig.OrigTtl)
	b = be32(b, sig.Expiration)
	b = be32(b, sig.Inception)
	b = append(b, byte(sig.KeyTag>>8), byte(sig.KeyTag))
	b = append(b, s.signerWire...)
	// Each record in canonical form: owner lowercased, TTL the original;
	// in canonical order (by their bytes, which differ only in data).
	start := len(b)
	var ends []int
	for _, rr := range rrs {
		if l := dns.Len(rr); cap(b)-len(b) < l+16 {
			b = slices.Grow(b, l+1024)
		}
		off := len(b)
		end, err := dns.PackRR(rr, b[:cap(b)], off, nil, false)
		if err != nil {
			return err
		}
		b = b[:end]
		canonical(b[off:], sig.OrigTtl)
		ends = append(ends, end)
	}
	if len(rrs) > 1 {
		b = sortWires(b, start, ends)
	}
	*bp = b
	digest := sha256.Sum256(b)
	der, err := s.key.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return err
	}
	raw, err := rawECDSA(der)
	if err != nil {
		return err
	}
	sig.Signature = base64.StdEncoding.EncodeToString(raw[:])
	return nil
}

func be32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// canonical lowercases the owner name of a packed record and sets its TTL.
func canonical(w []byte, ttl uint32) {
	i := 0
	for i < len(w) && w[i] != 0 {
		n := int(w[i])
		for j := i + 1; j <= i+n && j < len(w); j++ {
			w[j] = lower(w[j])
		}
		i += n + 1
	}
	i++ // the root label
	if i+8 <= len(w) {
		t := w[i+4 : i+8] // after type and class
		t[0], t[1], t[2], t[3] = byte(ttl>>24), byte(ttl>>16), byte(ttl>>8), byte(ttl)
	}
}

// sortWires puts the packed records after start (each ending at ends[i])
// in canonical order.
func sortWires(b []byte, start int, ends []int) []byte {
	wires := make([][]byte, len(ends))
	from := start
	for i, end := range ends {
		wires[i] = slices.Clone(b[from:end])
		from = end
	}
	slices.SortFunc(wires, bytes.Compare)
	b = b[:start]
	for _, w := range wires {
		b = append(b, w...)
	}
	return b
}

// rawECDSA is an ECDSA DER signature as RFC 6605 puts it: r and s, 32
// octets each.
func rawECDSA(der []byte) (out [sigLen]byte, err error) {
	if len(der) < 2 || der[0] != 0x30 || int(der[1]) != len(der)-2 {
		return out, errDER
	}
	rest := der[2:]
	for k := range 2 {
		if len(rest) < 2 || rest[0] != 0x02 || int(rest[1]) > len(rest)-2 {
			return out, errDER
		}
		v := rest[2 : 2+int(rest[1])]
		rest = rest[2+int(rest[1]):]
		v = bytes.TrimLeft(v, "\x00")
		if len(v) > 32 {
			return out, errDER
		}
		copy(out[k*32+32-len(v):(k+1)*32], v)
	}
	return out, nil
}
