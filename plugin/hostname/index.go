package hostname

import (
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Index is the in-memory view of the store that DNS answers come from. It is
// filled by a snapshot load and kept current by the change feed.
//
// Each zone keeps its names in a sharded table of its own (names.go), as
// CoreDNS's file plugin keeps a tree per zone, each value an immutable
// *node that a change replaces whole; the zone set is an immutable map
// behind an atomic pointer, rebuilt on the rare domain change (a zone
// keeps its table across it). A hostname's change costs O(its own names),
// and a zone transfer O(its zone's), whatever the number of hostnames.
type Index struct {
	zones  atomic.Pointer[zoneSet]
	size   atomic.Int64 // hostnames served
	serial atomic.Uint32
	loaded atomic.Bool
	// signers opens a signed zone's key; set before the first load, so a
	// signed zone is never loaded unsigned.
	signers func(*storage.Domain) (*domains.Signer, error)

	// jr holds what changed names held before, for IXFR.
	jr journal
	// copying, when set (by tests), runs after a zone transfer has read
	// the serial and before it copies the names: the feed's window.
	copying func()

	// watchers hear which zones a batch of changes touched (zone
	// transfers NOTIFY their secondaries).
	watchMu  sync.Mutex
	watchers map[int]func(zones []string)
	watchID  int

	// Owned by the feed's goroutine (the only writer): the names other than
	// its own that a hostname holds (records below it, empty non-terminals,
	// its challenge name), so a change can drop the ones it no longer has.
	// Most hostnames hold their own name only and have no entry.
	extra map[string][]string
	// regNames are the names of the acme-dns registrations served (by
	// username), so a deleted one's name can be dropped.
	regNames map[string]string
	regDue   []regDue // when each served one's values stop, in that order
	// acmeDNS is acme_dns_domain (lowercase FQDN), "" for none: the names
	// at and below it are the registrations' alone.
	acmeDNS string
}

// node is one name a hostname holds: its own name (addresses, records at
// the hostname), a name below it with records, or an empty non-terminal
// between the two.
type node struct {
	owner   uint64 // holder(the hostname's id)
	addrs   addrList
	expires int64               // Unix ms; 0: never
	rrsets  map[uint16][]dns.RR // owner lowercase FQDN, TTL served.TTL
	host    bool                // the hostname's own name
	// gone: its expiry had passed when this version was built, so no
	// secondary holds it (the change that built it was an IXFR that
	// deleted it, or the transfer that followed a load left it out).
	gone bool
}

// zone is one domain we are authoritative for.
type zone struct {
	name   string // lowercase FQDN with the trailing dot
	id     string
	caa    []dns.RR // the domain's CAA policy, owner = name
	signed bool     // the store says so: never answered or transferred unsigned
	// catalogVersion is the domain's (storage.Domain.CatalogVersion).
	catalogVersion int64
	signer         *sign.Signer // nil when the domain is not signed, or its key cannot be opened
	dnskey         string       // the DNSKEY the signer was made from
	kind           string       // kindPool or kindTeam, for metrics
	// names are the zone's names below its apex (lowercase FQDN ->
	// *node), those of a zone below it excepted.
	names *nameTable
}

type zoneSet map[string]*zone

// NewIndex returns an empty index whose signed zones' keys signers opens
// (nil: none is opened), with acme-dns registrations under acmeDNS ("" for
// none).
func NewIndex(signers func(*storage.Domain) (*domains.Signer, error), acmeDNS string) *Index {
	ix := &Index{extra: map[string][]string{}, regNames: map[string]string{}, signers: signers}
	if acmeDNS != "" {
		ix.acmeDNS = dns.Fqdn(acmeDNS)
	}
	ix.zones.Store(&zoneSet{})
	return ix
}

// zoneOf returns the most specific zone that holds qname (lowercase FQDN).
func (ix *Index) zoneOf(qname string) *zone { return ix.zones.Load().of(qname) }

// of returns the most specific zone of zs that holds qname.
func (zs *zoneSet) of(qname string) *zone {
	if len(*zs) == 0 {
		return nil
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(qname, off) {
		if z, ok := (*zs)[qname[off:]]; ok {
			return z
		}
	}
	return nil
}

// zone is the zone called name (lowercase FQDN), nil when none is.
func (ix *Index) zone(name string) *zone { return (*ix.zones.Load())[name] }

// zoneSet is the zone set now (not to be modified).
func (ix *Index) zoneSet() *zoneSet { return ix.zones.Load() }

// Serial is the change feed's position the index stands at: the zones'
// SOA serial.
func (ix *Index) Serial() uint32 { return ix.serial.Load() }

// node returns the entry for qname (lowercase FQDN), if any.
func (ix *Index) node(qname string) *node { return ix.zones.Load().get(qname) }

// get returns the entry for name in the zone of zs that holds it.
func (zs *zoneSet) get(name string) *node {
	if z := zs.of(name); z != nil {
		return z.names.get(name)
	}
	return nil
}

// put sets name's node in the zone of zs that holds it; false when no
// zone does.
func (zs *zoneSet) put(name string, n *node) bool {
	z := zs.of(name)
	if z != nil {
		z.names.put(name, n)
	}
	return z != nil
}

// drop removes name from its zone's table if owner's hostname holds it.
func (zs *zoneSet) drop(name string, owner uint64) {
	if z := zs.of(name); z != nil {
		z.names.drop(name, owner)
	}
}

// movedName is a name a new zone took over from the zone above it.
type movedName struct {
	from *nameTable
	name string
	n    *node
}

// adopt fills the tables of the zones of zs that prev lacks with the names
// under them that the zone above held, and returns those names, for the
// caller to drop from there once zs is the index's (readers find each
// name in one table or the other meanwhile).
func (zs *zoneSet) adopt(prev zoneSet) []movedName {
	var moved []movedName
	for name, z := range *zs {
		if prev[name] != nil {
			continue
		}
		parent := (&prev).of(name)
		if parent == nil {
			continue
		}
		suffix := "." + name
		parent.names.each(func(n string, nd *node) {
			// The new zone's apex too: a hostname of that name is its.
			if (n == name || strings.HasSuffix(n, suffix)) && zs.of(n) == z {
				moved = append(moved, movedName{parent.names, n, nd})
			}
		})
	}
	for _, m := range moved {
		zs.put(m.name, m.n)
	}
	return moved
}

// Watch calls f, on the feed's goroutine, with the zones (lowercase FQDNs)
// each applied batch of changes touched, until the returned stop is
// called. f must not block.
func (ix *Index) Watch(f func(zones []string)) (stop func()) {
	ix.watchMu.Lock()
	defer ix.watchMu.Unlock()
	if ix.watchers == nil {
		ix.watchers = map[int]func([]string){}
	}
	ix.watchID++
	id := ix.watchID
	ix.watchers[id] = f
	return func() {
		ix.watchMu.Lock()
		defer ix.watchMu.Unlock()
		delete(ix.watchers, id)
	}
}

func (ix *Index) touched(zones []string) {
	if len(zones) == 0 {
		return
	}
	ix.watchMu.Lock()
	defer ix.watchMu.Unlock()
	for _, f := range ix.watchers {
		f(zones)
	}
}

// unservable reports a zone the store marks signed whose key this node
// cannot open: it is answered SERVFAIL rather than unsigned.
func (z *zone) unservable() bool { return z.signed && z.signer == nil }

// Unservable are the zones the store marks signed whose key this node
// cannot open (names without the trailing dot, sorted): they answer
// SERVFAIL, and the node is not ready while there are any.
func (ix *Index) Unservable() []string {
	var names []string
	for _, z := range *ix.zones.Load() {
		if z.unservable() {
			names = append(names, strings.TrimSuffix(z.name, "."))
		}
	}
	slices.Sort(names)
	return names
}

// transferable are those of zones a secondary may transfer: not the
// signed ones, which are signed answer by answer and never leave the node
// (nor are NOTIFYed).
func (ix *Index) transferable(zones []string) []string {
	zs := *ix.zones.Load()
	out := make([]string, 0, len(zones))
	for _, name := range zones {
		if z := zs[name]; z != nil && !z.signed {
			out = append(out, name)
		}
	}
	return out
}

// Len is the number of hostnames in the index.
func (ix *Index) Len() int64 { return ix.size.Load() }

// Loaded reports whether the first snapshot is in.
func (ix *Index) Loaded() bool { return ix.loaded.Load() }

// Shared type lists of the nodes that hold addresses only (most of them):
// read-only, never appended to in place.
var (
	typesA    = []uint16{dns.TypeA}
	typesAAAA = []uint16{dns.TypeAAAA}
	typesBoth = []uint16{dns.TypeA, dns.TypeAAAA}
)

// typeList is the types at this name, sorted (NSEC bitmaps). It is not to
// be modified.
func (n *node) typeList() []uint16 {
	v4, v6 := n.addrs.families()
	if len(n.rrsets) == 0 {
		switch {
		case v4 && v6:
			return typesBoth
		case v4:
			return typesA
		case v6:
			return typesAAAA
		}
		return nil
	}
	ts := make([]uint16, 0, len(n.rrsets)+2)
	if v4 {
		ts = append(ts, dns.TypeA)
	}
	if v6 {
		ts = append(ts, dns.TypeAAAA)
	}
	for t := range n.rrsets {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}
