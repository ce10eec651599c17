// Package index holds what the hostname plugin answers from: the zones it
// serves and their names, built from the store and kept current by the
// change feed, with the journal transfers read their differences from.
package index

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
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
	zones  atomic.Pointer[Set]
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
	// pinned are the configured nameservers' names: in their zones'
	// chains always (order.go).
	pinned []string
}

// Node is one name a hostname holds: its own name (addresses, records at
// the hostname), a name below it with records, or an empty non-terminal
// between the two.
type Node struct {
	Owner   uint64 // holder(the hostname's id)
	Addrs   AddrList
	Expires int64               // Unix ms; 0: never
	RRsets  map[uint16][]dns.RR // owner lowercase FQDN, TTL served.TTL
	Host    bool                // the hostname's own name
	// Gone: its expiry had passed when this version was built, so no
	// secondary holds it (the change that built it was an IXFR that
	// deleted it, or the transfer that followed a load left it out).
	Gone bool
}

// Zone is one domain we are authoritative for.
type Zone struct {
	Name   string // lowercase FQDN with the trailing dot
	ID     string
	CAA    []dns.RR // the domain's CAA policy, owner = name
	Signed bool     // the store says so: never answered or transferred unsigned
	NSEC3  bool     // its transfers deny with NSEC3, not NSEC
	// CatalogVersion is the domain's (storage.Domain.CatalogVersion).
	CatalogVersion int64
	Signer         *sign.Signer // nil when the domain is not signed, or its key cannot be opened
	// Chain signs the zone whole for transfers, with the same key; nil
	// when Signer is.
	Chain  *chain.Signer
	DNSKEY string // the key set the signers were made from (domains.KeySet)
	Kind   string // kindPool or kindTeam, for metrics
	// Names are the zone's Names below its apex (lowercase FQDN ->
	// *node), those of a zone below it excepted.
	Names *Table
}

type Set map[string]*Zone

// New returns an empty index whose signed zones' keys signers opens
// (nil: none is opened), with acme-dns registrations under acmeDNS ("" for
// none).
func New(signers func(*storage.Domain) (*domains.Signer, error), acmeDNS string) *Index {
	ix := &Index{extra: map[string][]string{}, regNames: map[string]string{}, signers: signers}
	if acmeDNS != "" {
		ix.acmeDNS = dns.Fqdn(acmeDNS)
	}
	ix.zones.Store(&Set{})
	return ix
}

// ZoneOf returns the most specific zone that holds qname (lowercase FQDN).
func (ix *Index) ZoneOf(qname string) *Zone { return ix.zones.Load().Of(qname) }

// Of returns the most specific zone Of zs that holds qname.
func (zs *Set) Of(qname string) *Zone {
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

// Zone is the Zone called name (lowercase FQDN), nil when none is.
func (ix *Index) Zone(name string) *Zone { return (*ix.zones.Load())[name] }

// Zones is the zone set now (not to be modified).
func (ix *Index) Zones() *Set { return ix.zones.Load() }

// Serial is the change feed's position the index stands at: the zones'
// SOA serial.
func (ix *Index) Serial() uint32 { return ix.serial.Load() }

// Node returns the entry for qname (lowercase FQDN), if any.
func (ix *Index) Node(qname string) *Node { return ix.zones.Load().Get(qname) }

// Get returns the entry for name in the zone of zs that holds it.
func (zs *Set) Get(name string) *Node {
	if z := zs.Of(name); z != nil {
		return z.Names.Get(name)
	}
	return nil
}

// Put sets name's node in the zone of zs that holds it; false when no
// zone does.
func (zs *Set) Put(name string, n *Node) bool {
	z := zs.Of(name)
	if z != nil {
		z.Names.Put(name, n)
	}
	return z != nil
}

// Drop removes name from its zone's table if owner's hostname holds it.
func (zs *Set) Drop(name string, owner uint64) {
	if z := zs.Of(name); z != nil {
		z.Names.drop(name, owner)
	}
}

// movedName is a name a new zone took over from the zone above it.
type movedName struct {
	from *Table
	name string
	n    *Node
}

// adopt fills the tables of the zones of zs that prev lacks with the names
// under them that the zone above held, and returns those names, for the
// caller to drop from there once zs is the index's (readers find each
// name in one table or the other meanwhile).
func (zs *Set) adopt(prev Set) []movedName {
	var moved []movedName
	for name, z := range *zs {
		if prev[name] != nil {
			continue
		}
		parent := (&prev).Of(name)
		if parent == nil {
			continue
		}
		suffix := "." + name
		parent.Names.Each(func(n string, nd *Node) {
			// The new zone's apex too: a hostname of that name is its.
			if (n == name || strings.HasSuffix(n, suffix)) && zs.Of(n) == z {
				moved = append(moved, movedName{parent.Names, n, nd})
			}
		})
	}
	for _, m := range moved {
		zs.Put(m.name, m.n)
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

// Unservable reports a zone the store marks signed whose key this node
// cannot open: it is answered SERVFAIL rather than unsigned.
func (z *Zone) Unservable() bool { return z.Signed && z.Signer == nil }

// Unservable are the zones the store marks signed whose key this node
// cannot open (names without the trailing dot, sorted): they answer
// SERVFAIL, and the node is not ready while there are any.
func (ix *Index) Unservable() []string {
	var names []string
	for _, z := range *ix.zones.Load() {
		if z.Unservable() {
			names = append(names, strings.TrimSuffix(z.Name, "."))
		}
	}
	slices.Sort(names)
	return names
}

// Transferable are those of zones a secondary may transfer: not a signed
// one whose key this node cannot open, which is never transferred unsigned
// (nor NOTIFYed).
func (ix *Index) Transferable(zones []string) []string {
	zs := *ix.zones.Load()
	out := make([]string, 0, len(zones))
	for _, name := range zones {
		if z := zs[name]; z != nil && !z.Unservable() {
			out = append(out, name)
		}
	}
	return out
}

// Len is the number of hostnames in the index.
func (ix *Index) Len() int64 { return ix.size.Load() }

// Loaded reports whether the first snapshot is in.
func (ix *Index) Loaded() bool { return ix.loaded.Load() }

// The kinds of zone, for metrics: a pool domain ([P1]) or a team's own
// domain ([P2]).
const (
	KindPool = "pool"
	KindTeam = "team"
)

// Shared type lists of the nodes that hold addresses only (most of them):
// read-only, never appended to in place.
var (
	typesA    = []uint16{dns.TypeA}
	typesAAAA = []uint16{dns.TypeAAAA}
	typesBoth = []uint16{dns.TypeA, dns.TypeAAAA}
)

// TypeList is the types at this name, sorted (NSEC bitmaps). It is not to
// be modified.
func (n *Node) TypeList() []uint16 {
	v4, v6 := n.Addrs.Families()
	if len(n.RRsets) == 0 {
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
	ts := make([]uint16, 0, len(n.RRsets)+2)
	if v4 {
		ts = append(ts, dns.TypeA)
	}
	if v6 {
		ts = append(ts, dns.TypeAAAA)
	}
	for t := range n.RRsets {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// TTL is the TTL to serve n's records with: never past its hostname's
// expiry, so caches drop an idle name when we do. live is false once it has
// expired.
func (n *Node) TTL(max uint32, now time.Time) (ttl uint32, live bool) {
	if n.Expires == 0 {
		return max, true
	}
	left := n.Expires - now.UnixMilli()
	if left <= 0 {
		return 0, false
	}
	return uint32(min(int64(max), (left+999)/1000)), true
}
