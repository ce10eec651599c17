package chain

import (
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// NSEC is owner's link in the zone's chain: next is the owner after it in
// canonical order (the apex after the last), types what owner holds. Its
// TTL is the SOA's MINIMUM, as a denial's is (RFC 9077).
func NSEC(owner, next string, types []uint16, ttl uint32) *dns.NSEC {
	return &dns.NSEC{
		Hdr:        dns.RR_Header{Name: owner, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: next,
		TypeBitMap: sign.Bitmap(types, dns.TypeRRSIG, dns.TypeNSEC),
	}
}

// typesOf are the types of rrs (grouped by type), in order.
func typesOf(rrs []dns.RR) []uint16 {
	var ts []uint16
	for i, rr := range rrs {
		if i == 0 || rr.Header().Rrtype != rrs[i-1].Header().Rrtype {
			ts = append(ts, rr.Header().Rrtype)
		}
	}
	return ts
}

// Owner appends to out what the name of key holds, signed: rrs (grouped
// by type), an RRSIG over each RRset, and its place in d's chain (next the
// key after it) with that record's RRSIG, all in the windows of hour.
func (s *Signer) Owner(out, rrs []dns.RR, d Denial, key, next string, ttl uint32, hour int64) ([]dns.RR, error) {
	out = append(out, rrs...)
	out, err := s.sets(out, rrs, hour)
	if err != nil {
		return nil, err
	}
	link := d.Record(key, next, typesOf(rrs), ttl)
	return s.sets(append(out, link), []dns.RR{link}, hour)
}

// sets appends an RRSIG over each RRset of rrs (grouped by type).
func (s *Signer) sets(out, rrs []dns.RR, hour int64) ([]dns.RR, error) {
	for i := 0; i < len(rrs); {
		j := i + 1
		for j < len(rrs) && rrs[j].Header().Rrtype == rrs[i].Header().Rrtype {
			j++
		}
		sig, err := s.Sign(rrs[i:j], hour)
		if err != nil {
			return nil, err
		}
		out = append(out, sig)
		for _, o := range s.others {
			if sig, err = o.Sign(rrs[i:j], hour); err != nil {
				return nil, err
			}
			out = append(out, sig)
		}
		i = j
	}
	return out, nil
}
