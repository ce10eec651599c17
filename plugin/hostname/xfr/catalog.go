package xfr

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

// The catalog zone (RFC 9432, version 2): the served domains a secondary
// can transfer, so that a secondary configured with the catalog alone
// (Knot's catalog-role interpret, BIND's catalog-zones) serves every
// domain, those added later included. Signed domains are members as any
// other (they transfer signed), and stay members when signed or unsigned.
//
// Everything in it is read from the zone set, so every node sharing a
// store serves the same catalog: a member's id is a hash of its domain's
// id (stable across transfers, restarts and nodes), and the serial is one
// more than the sum of the domains' catalog versions, each of which moves
// by one whenever its domain enters the catalog (created; domains are
// never deleted). So the serial only grows,
// it moves with every change of membership, and with nothing else.

// catalogData is the catalog at one serial.
type catalogData struct {
	serial uint32
	rrs    []dns.RR            // NS, version TXT, members: the zone without its SOA
	names  map[string][]dns.RR // by lowercase owner
}

// catalogVersion is the schema version RFC 9432 defines.
const catalogVersion = "2"

// MemberID is the unique-id label of domain id in the catalog.
func MemberID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:10])
}

// catalogOf builds the catalog named name from zs.
func catalogOf(name string, zs *index.Set) *catalogData {
	c := &catalogData{serial: catalogSerial(zs), names: map[string][]dns.RR{}}
	hdr := func(owner string, t uint16) dns.RR_Header {
		return dns.RR_Header{Name: owner, Rrtype: t, Class: dns.ClassINET, Ttl: 0}
	}
	c.add(name, &dns.NS{Hdr: hdr(name, dns.TypeNS), Ns: "invalid."})
	c.add(name, &dns.TXT{Hdr: hdr("version."+name, dns.TypeTXT), Txt: []string{catalogVersion}})
	// Whether this node can open a signed member's key is its own
	// affair: the catalog is the same on every node.
	members := make([]*index.Zone, 0, len(*zs))
	for _, z := range *zs {
		members = append(members, z)
	}
	slices.SortFunc(members, func(a, b *index.Zone) int { return strings.Compare(a.Name, b.Name) })
	for _, z := range members {
		c.add(name, &dns.PTR{Hdr: hdr(MemberID(z.ID)+".zones."+name, dns.TypePTR), Ptr: z.Name})
	}
	return c
}

// add puts rr in the catalog named catalog, and the names between it and
// the apex in as empty non-terminals (a query there is NODATA).
func (c *catalogData) add(catalog string, rr dns.RR) {
	owner := rr.Header().Name
	c.rrs = append(c.rrs, rr)
	c.names[owner] = append(c.names[owner], rr)
	for off, end := dns.NextLabel(owner, 0); !end && len(owner[off:]) > len(catalog); off, end = dns.NextLabel(owner, off) {
		if _, ok := c.names[owner[off:]]; !ok {
			c.names[owner[off:]] = nil
		}
	}
}

// catalogSerial is the serial of zs's catalog.
func catalogSerial(zs *index.Set) uint32 {
	serial := int64(1)
	for _, z := range *zs {
		serial += z.CatalogVersion
	}
	return uint32(serial)
}

// catalog is the catalog of the index's zone set now: made again only
// when its serial moved (the same serial is the same members).
func (x *Transfers) catalog() *catalogData {
	zs := x.ix.Zones()
	serial := catalogSerial(zs)
	if c := x.catalogs.Load(); c != nil && c.serial == serial {
		return c
	}
	c := catalogOf(x.catalogZone, zs)
	x.catalogs.Store(c)
	return c
}

func (x *Transfers) catalogSOA(c *catalogData) *dns.SOA {
	ns, _ := x.answers.Nameservers()
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: x.catalogZone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 0},
		Ns:  ns[0], Mbox: cmp.Or(x.soa.Mbox, "hostmaster."+x.catalogZone), Serial: c.serial,
		Refresh: x.soa.Refresh, Retry: x.soa.Retry, Expire: x.soa.Expire, Minttl: 0,
	}
}

// transferCatalog is the catalog's AXFR, or its SOA alone to a secondary
// that holds this serial (it keeps no journal: a catalog is small).
func (x *Transfers) transferCatalog(serial uint32) (<-chan []dns.RR, error) {
	if !x.ix.Loaded() {
		return nil, errNotLoaded
	}
	c := x.catalog()
	soa := x.catalogSOA(c)
	ch := make(chan []dns.RR, 1)
	if serial != 0 && !index.SerialOlder(serial, c.serial) {
		xfrOut.WithLabelValues("current").Inc()
		ch <- []dns.RR{soa}
		close(ch)
		return ch, nil
	}
	rrs := append([]dns.RR{soa}, c.rrs...)
	ch <- append(rrs, soa)
	close(ch)
	xfrOut.WithLabelValues("axfr").Inc()
	return ch, nil
}

// CatalogAnswer fills m, an answer to qtype at qname in the catalog zone,
// as any zone's (secondaries ask for its SOA); it is not signed.
func (x *Transfers) CatalogAnswer(m *dns.Msg, qname string, qtype uint16) {
	c := x.catalog()
	if qname == x.catalogZone && (qtype == dns.TypeSOA || qtype == dns.TypeANY) {
		m.Answer = append(m.Answer, x.catalogSOA(c))
	}
	rrs, exists := c.names[qname]
	for _, rr := range rrs {
		if qtype == dns.TypeANY || rr.Header().Rrtype == qtype {
			m.Answer = append(m.Answer, dns.Copy(rr))
		}
	}
	if !exists && qname != x.catalogZone {
		m.Rcode = dns.RcodeNameError
	}
	if len(m.Answer) == 0 {
		m.Ns = []dns.RR{x.catalogSOA(c)}
	}
}
