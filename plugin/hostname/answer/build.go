package answer

import (
	"strings"
	"time"

	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// TTLs of the records this plugin writes.
const (
	NSTTL     = 3600
	ttlDNSKEY = 3600
)

// reply is an answer being built: the message, and what DNSSEC needs to
// know of it.
type reply struct {
	m       *dns.Msg
	z       *index.Zone
	owner   string   // qname in the client's case
	types   []uint16 // the types at qname, for NSEC on a negative answer
	missing bool     // qname does not exist
	capped  bool     // TTLs were shortened to the hostname's expiry
	co      bool     // the client takes a compact denial's NXDOMAIN (RFC 9824 4)
}

// answer fills m, the answer to qtype at name in z, writing name as owner
// (the question's, in the case the answerer packs it); do: the client asked
// for DNSSEC records; co: it takes NXDOMAIN with a compact denial.
func (a *Answerer) answer(m *dns.Msg, z *index.Zone, name, owner string, qtype uint16, do, co bool, now time.Time) {
	var n *index.Node
	if name != z.Name {
		n = z.Names.Get(name)
	}
	if a.nxdomain(z, n, name, qtype, do, now) {
		m.Ns = []dns.RR{a.SOA(z, a.soaCfg.Minimum)}
		m.Rcode = dns.RcodeNameError
		return
	}
	r := &reply{m: m, z: z, owner: owner, co: co}
	a.fill(r, name, qtype, now)
	if z.Signer != nil && (qtype == dns.TypeNSEC || qtype == dns.TypeRRSIG) {
		// A signed zone holds an NSEC and RRSIGs at every name (a black
		// lie's included): they are answered, never denied by an NSEC
		// that lists them (RFC 4035 3.1.3.1).
		a.dnssecRecords(r, name, qtype, now)
	}
	if len(m.Answer) == 0 {
		m.Ns = []dns.RR{a.SOA(z, a.soaCfg.Minimum)}
	}
	if do && z.Signer != nil {
		a.sign(r, qtype, now)
	}
}

// nxdomain reports whether the answer to qtype at name in z (whose node is
// n, nil for none) is the zone's NXDOMAIN, the same for every missing
// name: the name does not exist and nothing is signed (in a signed zone a
// denial with DO is the name's own, and its NSEC and RRSIG are answered).
func (a *Answerer) nxdomain(z *index.Zone, n *index.Node, name string, qtype uint16, do bool, now time.Time) bool {
	if z.Signer != nil && (do || qtype == dns.TypeNSEC || qtype == dns.TypeRRSIG) {
		return false
	}
	return a.missing(z, n, name, now)
}

// missing reports whether name, whose node in z is n, does not exist: no
// live hostname or record holds it, it is no nameserver's name, nor a
// name above one or above acme_dns_domain.
func (a *Answerer) missing(z *index.Zone, n *index.Node, name string, now time.Time) bool {
	if name == z.Name || a.static[name] != "" {
		return false
	}
	if n != nil {
		if _, live := n.TTL(0, now); live {
			return false
		}
	}
	return !a.aboveStatic(name) && !a.aboveRegistrations(name)
}

// fill answers qtype at qname into r: at the apex, at a nameserver's
// name, or at any other name.
func (a *Answerer) fill(r *reply, qname string, qtype uint16, now time.Time) {
	switch {
	case qname == r.z.Name:
		a.apex(r, qtype)
	case a.static[qname] != "":
		r.types = addrTypes(a.static[qname])
		if qtype == dns.TypeANY {
			r.positive(anyRRs(r.owner, r.types, served.TTL))
			break
		}
		r.positive(index.AddrRRs(r.owner, qtype, a.static[qname], NSTTL))
	default:
		a.name(r, qname, qtype, now)
	}
}

// dnssecRecords answers a query for the NSEC or the RRSIGs at a name of a
// signed zone, as BIND and Knot do: the name's NSEC (the one its denials
// carry), or the signature of each of its RRsets, its NSEC's included. A
// name that does not exist holds its black lie's NSEC alone.
func (a *Answerer) dnssecRecords(r *reply, qname string, qtype uint16, now time.Time) {
	types := r.types
	if r.missing {
		types = []uint16{sign.TypeNXNAME}
	}
	r.missing = false
	n := sign.NSEC(r.owner, types, a.soaCfg.Minimum)
	if qtype == dns.TypeNSEC {
		r.positive([]dns.RR{n})
		return
	}
	sets := []dns.RR{n}
	for _, t := range types {
		one := &reply{m: new(dns.Msg), z: r.z, owner: r.owner}
		a.fill(one, qname, t, now)
		sets = append(sets, one.m.Answer...)
		r.capped = r.capped || one.capped
	}
	signed := r.z.Signer.Section(sets, a.fullTTL(r), now)
	r.positive(signed[len(sets):])
}

// name answers for a name below the apex: a hostname, a name with records
// under it, an empty non-terminal, or nothing.
func (a *Answerer) name(r *reply, qname string, qtype uint16, now time.Time) {
	n := a.ix.Node(qname)
	var ttl uint32
	live := false
	if n != nil {
		ttl, live = n.TTL(a.addressTTL, now)
		r.capped = n.Expires != 0
	}
	if !live {
		r.missing = a.missing(r.z, n, qname, now)
		return
	}
	r.types = n.TypeList()
	// The domain's CAA policy stands at every hostname without a CAA of its own.
	policy := served.PolicyAt(n.Host, n.RRsets, r.z.CAA)
	if policy != nil {
		r.types = withType(r.types, dns.TypeCAA)
	}
	rttl, _ := n.TTL(served.TTL, now)
	if qtype == dns.TypeANY {
		r.positive(anyRRs(r.owner, r.types, rttl))
		return
	}
	var rrs []dns.RR
	if qtype == dns.TypeA || qtype == dns.TypeAAAA {
		rrs = index.AddrRRs(r.owner, qtype, n.Addrs, ttl)
	}
	if set := n.RRsets[qtype]; set != nil {
		rrs = append(rrs, served.Rewrite(set, r.owner, rttl)...)
	}
	if policy != nil && qtype == dns.TypeCAA {
		rrs = append(rrs, served.Rewrite(policy, r.owner, rttl)...)
	}
	if qtype == dns.TypeMX || qtype == dns.TypeSRV {
		r.m.Extra = a.targets(rrs, now)
	}
	r.positive(rrs)
}

// targets are the addresses this server holds of the hosts MX and SRV
// records name, for the additional section (RFC 1035 3.3.9, RFC 2782), as
// Knot and BIND give them: a resolver need not ask for them again.
func (a *Answerer) targets(rrs []dns.RR, now time.Time) []dns.RR {
	var out []dns.RR
	seen := map[string]bool{}
	for _, rr := range rrs {
		var host string
		switch rr := rr.(type) {
		case *dns.MX:
			host = rr.Mx
		case *dns.SRV:
			host = rr.Target
		}
		name := dns.CanonicalName(host)
		if name == "." || seen[name] || a.ix.ZoneOf(name) == nil {
			continue
		}
		seen[name] = true
		if addrs := a.static[name]; addrs != "" {
			out = append(append(out, index.AddrRRs(host, dns.TypeA, addrs, NSTTL)...), index.AddrRRs(host, dns.TypeAAAA, addrs, NSTTL)...)
			continue
		}
		if n := a.ix.Node(name); n != nil {
			if ttl, live := n.TTL(a.addressTTL, now); live {
				out = append(append(out, index.AddrRRs(host, dns.TypeA, n.Addrs, ttl)...), index.AddrRRs(host, dns.TypeAAAA, n.Addrs, ttl)...)
			}
		}
	}
	return out
}

func (r *reply) positive(rrs []dns.RR) { r.m.Answer = rrs }

// anyRRs answers ANY at a name holding types the way RFC 8482 (4.2) and
// CoreDNS's any plugin do: one synthesised HINFO "RFC8482" "", never every
// RRset. The full set made ANY over UDP an amplifier - ten 2KB TXT records,
// or the signed apex, for a 40-byte query - and no client needs it. A name
// holding nothing (an empty non-terminal) stays NODATA. The TTL is a
// caller record's, so that it is signed like one.
func anyRRs(owner string, types []uint16, ttl uint32) []dns.RR {
	if len(types) == 0 {
		return nil
	}
	return []dns.RR{&dns.HINFO{
		Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeHINFO, Class: dns.ClassINET, Ttl: ttl},
		Cpu: "RFC8482",
	}}
}

func (a *Answerer) apex(r *reply, qtype uint16) {
	z := r.z
	r.types = []uint16{dns.TypeNS, dns.TypeSOA}
	if len(z.CAA) > 0 {
		r.types = withType(r.types, dns.TypeCAA)
	}
	if z.Signer != nil {
		r.types = withType(withType(withType(r.types, dns.TypeDNSKEY), dns.TypeCDS), dns.TypeCDNSKEY)
		if z.NSEC3 {
			// What its secondaries serve, from the transfer (chain.Denial).
			r.types = withType(r.types, dns.TypeNSEC3PARAM)
		}
	}
	if qtype == dns.TypeANY {
		r.positive(anyRRs(r.owner, r.types, served.TTL))
		return
	}
	var rrs []dns.RR
	if qtype == dns.TypeSOA {
		soa := a.SOA(z, a.soaCfg.Minimum)
		soa.Header().Name = r.owner
		rrs = append(rrs, soa)
	}
	if qtype == dns.TypeNS {
		rrs = append(rrs, a.NS(r.owner)...)
		r.m.Extra = a.glue()
	}
	if qtype == dns.TypeCAA {
		rrs = append(rrs, served.Rewrite(z.CAA, r.owner, served.TTL)...)
	}
	if p := z.Denial().Param(); z.Signer != nil && qtype == dns.TypeNSEC3PARAM && p != nil {
		p.Header().Name = r.owner
		rrs = append(rrs, p)
	}
	if z.Signer != nil && (qtype == dns.TypeDNSKEY || qtype == dns.TypeCDNSKEY || qtype == dns.TypeCDS) {
		for _, k := range Keys(z, r.owner) {
			if k.Header().Rrtype == qtype {
				rrs = append(rrs, k)
			}
		}
	}
	r.positive(rrs)
}

// Keys are a signed zone's DNSKEY, CDNSKEY and CDS at owner (its apex, as
// asked), in type order: its key set (two keys during a rollover), the
// same keys as CDNSKEY and their DS as CDS (RFC 7344, RFC 8078), so that a
// parent that scans for them installs the DS itself. Answers and
// transfers serve these.
func Keys(z *index.Zone, owner string) []dns.RR {
	if z.Signer == nil {
		return nil
	}
	var keys, cds, cdnskey []dns.RR
	for _, dk := range z.Signer.Set() {
		k := *dk
		k.Hdr.Name, k.Hdr.Ttl = owner, ttlDNSKEY
		keys = append(keys, &k)
		if ds := k.ToDS(dns.SHA256); ds != nil {
			cds = append(cds, ds.ToCDS())
		}
		cdnskey = append(cdnskey, k.ToCDNSKEY())
	}
	return append(append(keys, cds...), cdnskey...)
}

// sign adds the RRSIGs, and on a negative answer the NSEC that proves it.
// A name that does not exist gets a compact denial (RFC 9824): NOERROR,
// and an NSEC saying the name holds nothing but NSEC, RRSIG and the
// NXNAME pseudo-type, which tells it from an empty name; NXDOMAIN with
// the same NSEC for a client that set CO.
func (a *Answerer) sign(r *reply, qtype uint16, now time.Time) {
	m, s := r.m, r.z.Signer
	if len(m.Answer) == 0 {
		m.Rcode = dns.RcodeSuccess
		types := r.types
		if r.missing {
			types = []uint16{sign.TypeNXNAME}
			if r.co {
				m.Rcode = dns.RcodeNameError
			}
		}
		m.Ns = append(m.Ns, sign.NSEC(r.owner, types, a.soaCfg.Minimum))
	}
	full := a.fullTTL(r)
	m.Answer = s.Section(m.Answer, full, now)
	m.Ns = s.Section(m.Ns, full, now)
	// Additional data of another zone (a nameserver's address in another
	// served domain) is not this zone's to sign (RFC 4035 5.3.1): it goes
	// unsigned, as glue does.
	var ours, theirs []dns.RR
	for _, rr := range m.Extra {
		if a.ix.ZoneOf(dns.CanonicalName(rr.Header().Name)) == r.z {
			ours = append(ours, rr)
		} else {
			theirs = append(theirs, rr)
		}
	}
	m.Extra = append(s.Section(ours, full, now), theirs...)
}

// fullTTL is the TTL an RRset of r is signed with: a TTL shortened to an
// expiry is signed at its full value, so the signature is made once, not
// once a second.
func (a *Answerer) fullTTL(r *reply) func(dns.RR) uint32 {
	return func(rr dns.RR) uint32 {
		if r.capped && rr.Header().Rrtype != dns.TypeSOA && rr.Header().Rrtype != dns.TypeNSEC {
			if t := rr.Header().Rrtype; t == dns.TypeA || t == dns.TypeAAAA {
				return a.addressTTL
			}
			return served.TTL
		}
		return rr.Header().Ttl
	}
}

func (a *Answerer) NS(owner string) []dns.RR {
	rrs := make([]dns.RR, len(a.ns))
	for i, n := range a.ns {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: NSTTL}, Ns: n}
	}
	return rrs
}

// glue is the addresses of the nameservers whose names are in our zones.
func (a *Answerer) glue() []dns.RR {
	var rrs []dns.RR
	for _, n := range a.ns {
		if a.ix.ZoneOf(n) == nil {
			continue
		}
		rrs = append(rrs, index.AddrRRs(n, dns.TypeA, a.static[n], NSTTL)...)
		rrs = append(rrs, index.AddrRRs(n, dns.TypeAAAA, a.static[n], NSTTL)...)
	}
	return rrs
}

func addrTypes(addrs index.AddrList) []uint16 {
	return (&index.Node{Addrs: addrs}).TypeList()
}

func withType(ts []uint16, t uint16) []uint16 {
	for _, x := range ts {
		if x == t {
			return ts
		}
	}
	return append(append([]uint16{}, ts...), t)
}

// aboveStatic reports whether qname is an empty non-terminal above a
// nameserver name (ns1.sub.example.org makes sub.example.org exist).
func (a *Answerer) aboveStatic(qname string) bool {
	for n := range a.static {
		if len(n) > len(qname) && n[len(n)-len(qname)-1] == '.' && strings.HasSuffix(n, qname) {
			return true
		}
	}
	return false
}

// aboveRegistrations reports whether qname is acme_dns_domain or a name
// above it: they exist, empty, whether or not a registration's values
// are served below them, so that a resolver minimising its questions
// (RFC 9156) is never told that nothing is there.
func (a *Answerer) aboveRegistrations(qname string) bool {
	d := a.acmeDNS
	return d != "" && (d == qname || len(d) > len(qname) && d[len(d)-len(qname)-1] == '.' && strings.HasSuffix(d, qname))
}
