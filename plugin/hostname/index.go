package hostname

import (
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"
)

// Index is the in-memory view of the store that DNS answers come from. It is
// filled by a snapshot load and kept current by the change feed.
//
// Readers never wait on a writer: hostnames live in a sync.Map (lock-free
// loads), each value an immutable *host that a change replaces whole; the
// zone set is an immutable map behind an atomic pointer, rebuilt on the rare
// domain change. A write costs O(1), whatever the number of names.
type Index struct {
	hosts  atomic.Pointer[sync.Map] // lowercase FQDN ("abc.example.org.") -> *host
	zones  atomic.Pointer[zoneSet]
	size   atomic.Int64
	serial atomic.Uint32
	loaded atomic.Bool
}

// host is what DNS needs of a hostname.
type host struct {
	id      string
	addrs   []netip.Addr // one set by the caller, or those of its target
	expires int64        // Unix ms; 0: never
}

// zone is one domain we are authoritative for.
type zone struct {
	name string // lowercase FQDN with the trailing dot
	id   string
}

type zoneSet map[string]*zone

// NewIndex returns an empty index.
func NewIndex() *Index {
	ix := &Index{}
	ix.hosts.Store(new(sync.Map))
	ix.zones.Store(&zoneSet{})
	return ix
}

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

// host returns the entry for qname (lowercase FQDN), if any.
func (ix *Index) host(qname string) *host {
	v, ok := ix.hosts.Load().Load(qname)
	if !ok {
		return nil
	}
	return v.(*host)
}

// put stores h under name in m, counting new names.
func (ix *Index) put(m *sync.Map, name string, h *host) {
	if _, loaded := m.Swap(name, h); !loaded {
		ix.size.Add(1)
	}
}

// remove deletes name if it still holds the hostname with id: a released
// name may already carry a newer hostname that must stay.
func (ix *Index) remove(m *sync.Map, name, id string) {
	v, ok := m.Load(name)
	if ok && v.(*host).id == id && m.CompareAndDelete(name, v) {
		ix.size.Add(-1)
	}
}

// Len is the number of hostnames in the index.
func (ix *Index) Len() int64 { return ix.size.Load() }

// Loaded reports whether the first snapshot is in.
func (ix *Index) Loaded() bool { return ix.loaded.Load() }
