package index

import (
	"slices"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
)

// A signed zone's table keeps its names in canonical order (chain.Order):
// the NSEC chain an IXFR states the changes of. A name is in it while its
// node holds records a secondary serves (Chained); the apex is not, being
// first always. The order is built when the zone is loaded or signed, and
// kept by every Put and drop after.

// Chained reports whether n holds records a transfer sends (NodeRRs): an
// empty non-terminal, or a name whose expiry was recorded, holds none.
func (n *Node) Chained() bool {
	return n != nil && !n.Gone && (n.Addrs != "" || len(n.RRsets) > 0)
}

// ordered keeps t's order, if any, for name's new node n (nil: dropped).
func (t *Table) ordered(name string, n *Node) {
	if t.order == nil {
		return
	}
	if n.Chained() {
		t.order.Insert(name)
	} else {
		t.order.Delete(name)
	}
}

// Order is the table's canonical order (nil unless its zone is signed); it
// is read under the journal's lock (Index.WithChanges).
func (t *Table) Order() *chain.Order { return t.order }

// keepOrder gives t an order of its names below apex when signed, and
// drops it when not. The caller is the feed, before or under the journal's
// lock: no transfer reads it meanwhile.
func (t *Table) keepOrder(apex string, signed bool) {
	switch {
	case !signed:
		t.order = nil
	case t.order == nil:
		var names []string
		t.Each(func(name string, n *Node) {
			if name != apex && n.Chained() {
				names = append(names, name)
			}
		})
		slices.SortFunc(names, chain.Compare)
		t.order = chain.NewOrder(apex, names)
	}
}
