package index

import (
	"slices"
	"strings"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/miekg/dns"
)

// A signed zone's table keeps its chain (chain.Order): the names in it in
// the order of the zone's denial, NSEC or NSEC3, which an IXFR states the
// changes of. A name is in it while its node is a member (Member): for
// NSEC, while it holds records a secondary serves; for NSEC3, empty
// non-terminals too. The apex and the configured nameservers' names in the
// zone are pinned in it. The order is built when the zone is loaded or
// signed (or its denial changes), and kept by every Put and drop after.

// Chained reports whether n holds records a transfer sends (NodeRRs): an
// empty non-terminal, or a name whose expiry was recorded, holds none.
func (n *Node) Chained() bool {
	return n != nil && !n.Gone && (n.Addrs != "" || len(n.RRsets) > 0)
}

// Member reports whether n's name is in d's chain.
func Member(d chain.Denial, n *Node) bool {
	return d.Member(n != nil && !n.Gone, n.Chained())
}

// ordered keeps t's order, if any, for name's new node n (nil: dropped).
func (t *Table) ordered(name string, n *Node) {
	if t.order == nil {
		return
	}
	d := t.order.Denial()
	if Member(d, n) {
		t.order.Insert(d.Key(name))
	} else {
		t.order.Delete(d.Key(name))
	}
}

// keepOrders gives every zone of zs the chain it needs (orderFor), with the
// configured nameservers' names in it pinned.
func (ix *Index) keepOrders(zs Set) {
	ix.ordersFor(zs).keep()
}

// newOrders are the chains zones need made or dropped: made (a million
// names sorted take seconds) before the journal's lock is taken, and kept
// under it, so the feed and transfers do not wait for the sort.
type newOrders map[*Table]*chain.Order

// ordersFor are the chains the zones of zs need: a new one for a zone
// signed here without one (or with another denial), none for a zone not
// signed here. The caller is the feed (the tables' one writer).
func (ix *Index) ordersFor(zs Set) newOrders {
	out := newOrders{}
	for _, z := range zs {
		if o, change := z.Names.orderFor(z, ix.pinnedIn(zs, z)); change {
			out[z.Names] = o
		}
	}
	return out
}

// keep gives each table its new chain; the caller holds the journal's
// lock (or the tables are not yet seen).
func (o newOrders) keep() {
	for t, order := range o {
		t.order = order
	}
}

// pinnedIn are the names in z's chain whatever they hold, the apex first:
// the configured nameservers' names in it, and with NSEC3, acme_dns_domain
// and the names between it and the apex, the empty non-terminals above
// the registrations (which hold no node of their own).
func (ix *Index) pinnedIn(zs Set, z *Zone) []string {
	in := []string{z.Name}
	for _, n := range ix.pinned {
		if zs.Of(n) == z && n != z.Name {
			in = append(in, n)
		}
	}
	if z.NSEC3 && ix.acmeDNS != "" && zs.Of(ix.acmeDNS) == z {
		for n := ix.acmeDNS; n != z.Name && dns.IsSubDomain(z.Name, n); n = n[strings.IndexByte(n, '.')+1:] {
			in = append(in, n)
		}
	}
	return in
}

// SetPinned names the configured nameservers (lowercase FQDNs): each is in
// its zone's chain whatever its node holds (its addresses are the
// configuration's). Set before the first load.
func (ix *Index) SetPinned(names []string) { ix.pinned = names }

// orderFor is the chain t needs for z, and whether it is not t's: nil
// when z is not signed here; a new one, with pinned in it, when t has none
// or one of another denial.
func (t *Table) orderFor(z *Zone, pinned []string) (*chain.Order, bool) {
	d := z.Denial()
	switch {
	case z.Chain == nil:
		return nil, t.order != nil
	case t.order == nil || t.order.Denial() != d:
		var keys []string
		t.Each(func(name string, n *Node) {
			if Member(d, n) {
				keys = append(keys, d.Key(name))
			}
		})
		slices.SortFunc(keys, d.Compare)
		keys = slices.CompactFunc(keys, func(a, b string) bool { return d.Compare(a, b) == 0 })
		return chain.NewOrder(d, keys, pinned...), true
	}
	return t.order, false
}

// Denial is how z's transfers deny.
func (z *Zone) Denial() chain.Denial { return chain.Denial{Zone: z.Name, NSEC3: z.NSEC3} }
