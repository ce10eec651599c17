package hostname

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hostmint/hostmint/seal"
	"github.com/miekg/dns"
)

// Index is the in-memory view of the store that DNS answers come from. It is
// filled by a snapshot load and kept current by the change feed.
//
// Readers never wait on a writer: names live in a sync.Map (lock-free
// loads), each value an immutable *node that a change replaces whole; the
// zone set is an immutable map behind an atomic pointer, rebuilt on the rare
// domain change. A hostname's change costs O(its own names), whatever the
// number of hostnames.
type Index struct {
	nodes  atomic.Pointer[sync.Map] // lowercase FQDN ("abc.example.org.") -> *node
	zones  atomic.Pointer[zoneSet]
	size   atomic.Int64 // hostnames served
	serial atomic.Uint32
	loaded atomic.Bool
	key    atomic.Pointer[seal.Key] // opens the zones' DNSSEC keys

	// Owned by the feed's goroutine (the only writer): the names each
	// hostname holds, so a change can drop the ones it no longer has.
	names map[string][]string
}

// node is one name a hostname holds: its own name (addresses, records at
// the hostname), a name below it with records, or an empty non-terminal
// between the two.
type node struct {
	id      string // the hostname's id
	host    bool   // the hostname's own name
	addrs   []netip.Addr
	expires int64               // Unix ms; 0: never
	rrsets  map[uint16][]dns.RR // owner lowercase FQDN, TTL records.TTL
	types   []uint16            // the types at this name, sorted (NSEC bitmaps)
}

// zone is one domain we are authoritative for.
type zone struct {
	name   string // lowercase FQDN with the trailing dot
	id     string
	caa    []dns.RR // the domain's CAA policy, owner = name
	signer *signer  // nil when the domain is not signed
	dnskey string   // the DNSKEY the signer was made from
}

type zoneSet map[string]*zone

// NewIndex returns an empty index.
func NewIndex() *Index {
	ix := &Index{names: map[string][]string{}}
	ix.nodes.Store(new(sync.Map))
	ix.zones.Store(&zoneSet{})
	return ix
}

// SetKey gives the index the key that opens DNSSEC private keys.
func (ix *Index) SetKey(k seal.Key) { ix.key.Store(&k) }

// zoneOf returns the most specific zone that holds qname (lowercase FQDN).
func (ix *Index) zoneOf(qname string) *zone {
	zs := *ix.zones.Load()
	if len(zs) == 0 {
		return nil
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(qname, off) {
		if z, ok := zs[qname[off:]]; ok {
			return z
		}
	}
	return nil
}

// node returns the entry for qname (lowercase FQDN), if any.
func (ix *Index) node(qname string) *node {
	v, ok := ix.nodes.Load().Load(qname)
	if !ok {
		return nil
	}
	return v.(*node)
}

// Len is the number of hostnames in the index.
func (ix *Index) Len() int64 { return ix.size.Load() }

// Loaded reports whether the first snapshot is in.
func (ix *Index) Loaded() bool { return ix.loaded.Load() }

// setTypes fills n.types from what the node holds.
func (n *node) setTypes() {
	n.types = n.types[:0]
	for _, a := range n.addrs {
		t := dns.TypeAAAA
		if a.Is4() {
			t = dns.TypeA
		}
		if !slices.Contains(n.types, t) {
			n.types = append(n.types, t)
		}
	}
	for t := range n.rrsets {
		n.types = append(n.types, t)
	}
	slices.Sort(n.types)
}
