// Package served is the one projection of what Hostmint serves: it turns the
// stored rows of a hostname (its addresses, records and DNS-01 values), a
// domain's CAA policy and the configured nameservers and SOA into the
// RRsets served at each name. The DNS index answers and transfers from it,
// and DNS UPDATE checks its prerequisites (RFC 2136 3.2) against it, built
// over the rows its transaction locked: a prerequisite holds exactly when
// DNS shows what it states. Nothing else decides what a name serves.
package served

import (
	"net/netip"
	"strings"

	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// TTL is what every record a name serves is served with, but addresses
// (the address TTL), the apex's NS and SOA, and DNS-01 values
// (records.ChallengeTTL).
const TTL = records.TTL

// ChallengeLife is how long DNS-01 values (a hostname's, an acme-dns
// registration's) are served after the newest was written.
const ChallengeLife = records.ChallengeLife

// Name is what one name below a zone's apex serves.
type Name struct {
	// Host: a hostname's own name, where the domain's CAA policy stands
	// when it holds no CAA of its own (PolicyAt).
	Host bool
	// Addrs are its A and AAAA (a hostname's own name only).
	Addrs []netip.Addr
	// RRsets are its other records by type, owner the name (lowercase
	// FQDN), TTL records.TTL (ChallengeTTL for DNS-01 values).
	RRsets map[uint16][]dns.RR
	// Expires is when it stops being served (Unix ms; 0: never): a [P1]
	// hostname's idle expiry, a DNS-01 value's life.
	Expires int64
}

// Hostname is what h serves: its own name, and the names below it by
// lowercase FQDN (its records' owners, the empty names between them and
// the hostname, its DNS-01 name). ok is false when h serves nothing: not
// live or pending, or no address. A record that cannot be decoded is left
// out and handed to skip (nil: dropped). own is a value: the index makes
// its own node of it, and a million names at a load allocate no more.
func Hostname(h *storage.Hostname, recs []storage.Record, chals []storage.Challenge, skip func(r *storage.Record, err error)) (own Name, below map[string]*Name, ok bool) {
	if !h.Active() {
		return Name{}, nil, false
	}
	addrs := h.ServedAddrs()
	if len(addrs) == 0 {
		return Name{}, nil, false
	}
	own = Name{Host: true, Addrs: addrs, Expires: h.ExpiresAt}
	name := dns.Fqdn(h.Name)
	for _, digest := range DHCIDs(h) {
		own.RRsets = withRR(own.RRsets, &dns.DHCID{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeDHCID, Class: dns.ClassINET, Ttl: TTL}, Digest: digest})
	}
	if len(recs) == 0 && len(chals) == 0 {
		return own, nil, true
	}
	names := map[string]*Name{}
	for i := range recs {
		r := &recs[i]
		owner := dns.Fqdn(r.Name)
		rr, err := recordRR(r, owner)
		if err != nil {
			if skip != nil {
				skip(r, err)
			}
			continue
		}
		if owner == name { // own's fields, not a pointer to it, which would move it to the heap
			own.RRsets = withRR(own.RRsets, rr)
			continue
		}
		n := names[owner]
		if n == nil {
			n = &Name{Expires: h.ExpiresAt}
			names[owner] = n
		}
		n.RRsets = withRR(n.RRsets, rr)
		// Names between the record and the hostname exist, empty.
		for p := parent(owner); p != name && dns.IsSubDomain(name, p); p = parent(p) {
			if names[p] == nil {
				names[p] = &Name{Expires: h.ExpiresAt}
			}
		}
	}
	if c := challenge(h, chals); c != nil {
		names[records.ChallengeLabel+"."+name] = c
	}
	return own, names, true
}

// DHCIDs are the base64 digests of h's DHCID RRset (RFC 4701), which a
// DHCP server keeps at the name through DNS UPDATE.
func DHCIDs(h *storage.Hostname) []string {
	if h.DHCID == "" {
		return nil
	}
	return strings.Split(h.DHCID, "\n")
}

// withRR is sets with rr added to its type's RRset.
func withRR(sets map[uint16][]dns.RR, rr dns.RR) map[uint16][]dns.RR {
	if sets == nil {
		sets = map[uint16][]dns.RR{}
	}
	sets[rr.Header().Rrtype] = append(sets[rr.Header().Rrtype], rr)
	return sets
}

func recordRR(r *storage.Record, owner string) (dns.RR, error) {
	data, err := records.Decode(r.Type, []byte(r.Data))
	if err != nil {
		return nil, err
	}
	return data.RR(r.Type, owner, records.TTL)
}

// challenge serves the newest DNS-01 values of h (chals, newest first) as
// TXT until records.ChallengeLife after the newest was written, and never
// past the hostname's own expiry.
func challenge(h *storage.Hostname, chals []storage.Challenge) *Name {
	if len(chals) == 0 {
		return nil
	}
	owner := records.ChallengeLabel + "." + dns.Fqdn(h.Name)
	n := &Name{Expires: chals[0].CreatedAt + records.ChallengeLife.Milliseconds(), RRsets: map[uint16][]dns.RR{}}
	if h.ExpiresAt != 0 {
		n.Expires = min(n.Expires, h.ExpiresAt)
	}
	for _, c := range chals[:min(len(chals), records.ChallengeValues)] {
		n.RRsets[dns.TypeTXT] = append(n.RRsets[dns.TypeTXT], challengeTXT(owner, c.Value))
	}
	return n
}

// Live reports whether n is served at now (Unix ms).
func (n *Name) Live(now int64) bool { return n.Expires == 0 || now < n.Expires }

// PolicyAt is the domain's CAA policy where a name serves it: at a
// hostname's own name (host) that holds no CAA of its own; nil elsewhere.
// Every reader of a name's CAA asks it: answers, transfers, UPDATE.
func PolicyAt(host bool, own map[uint16][]dns.RR, policy []dns.RR) []dns.RR {
	if !host || own[dns.TypeCAA] != nil || len(policy) == 0 {
		return nil
	}
	return policy
}

// Served are the RRsets n serves at owner by type, the domain's CAA
// policy (owner the apex) included where it stands, A and AAAA at
// addressTTL.
func (n *Name) Served(owner string, policy []dns.RR, addressTTL uint32) map[uint16][]dns.RR {
	out := map[uint16][]dns.RR{}
	for _, a := range n.Addrs {
		out[AddrType(a)] = append(out[AddrType(a)], AddrRR(owner, a, addressTTL))
	}
	for t, set := range n.RRsets {
		out[t] = append(out[t], Rewrite(set, owner, records.TTL)...)
	}
	if p := PolicyAt(n.Host, n.RRsets, policy); p != nil {
		out[dns.TypeCAA] = Rewrite(p, owner, records.TTL)
	}
	return out
}

// AddrType is the type of a's record: A or AAAA.
func AddrType(a netip.Addr) uint16 {
	if a.Is4() {
		return dns.TypeA
	}
	return dns.TypeAAAA
}

// AddrRR is a's A or AAAA record at owner.
func AddrRR(owner string, a netip.Addr, ttl uint32) dns.RR {
	hdr := dns.RR_Header{Name: owner, Rrtype: AddrType(a), Class: dns.ClassINET, Ttl: ttl}
	if a.Is4() {
		return &dns.A{Hdr: hdr, A: a.AsSlice()}
	}
	return &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()}
}

// Rewrite copies an RRset with the owner it is served at and its TTL
// capped at most.
func Rewrite(set []dns.RR, owner string, most uint32) []dns.RR {
	out := make([]dns.RR, len(set))
	for i, rr := range set {
		c := dns.Copy(rr)
		c.Header().Name, c.Header().Ttl = owner, min(c.Header().Ttl, most)
		out[i] = c
	}
	return out
}

// parent is name without its first label.
func parent(name string) string {
	if i, end := dns.NextLabel(name, 0); !end {
		return name[i:]
	}
	return "."
}

// Policy is domain d's CAA policy as served (owner its apex): at the apex,
// and at every hostname without a CAA of its own (PolicyAt).
func Policy(d *storage.Domain) []dns.RR {
	var out []dns.RR
	name := dns.Fqdn(d.Name)
	for _, c := range domains.CAA(d) {
		if rr, err := dns.NewRR(name + " 300 IN CAA " + c); err == nil {
			out = append(out, rr)
		}
	}
	return out
}

// Registration is what an acme-dns registration serves at its name (r.Name,
// below acme_dns_domain): its two newest values as TXT until
// records.ChallengeLife after the newer was written; nil when it has none.
func Registration(r *storage.Registration) *Name {
	if r.TXTAt == 0 || r.TXTNew == "" {
		return nil
	}
	owner := dns.Fqdn(r.Name)
	n := &Name{Expires: r.TXTAt + records.ChallengeLife.Milliseconds(), RRsets: map[uint16][]dns.RR{}}
	for _, v := range []string{r.TXTNew, r.TXTOld} {
		if v != "" {
			n.RRsets[dns.TypeTXT] = append(n.RRsets[dns.TypeTXT], challengeTXT(owner, v))
		}
	}
	return n
}

// challengeTXT is one DNS-01 value as served at owner.
func challengeTXT(owner, value string) dns.RR {
	return &dns.TXT{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: records.ChallengeTTL},
		Txt: []string{value}}
}
