package index

import "github.com/hostmint/hostmint/plugin/hostname/chain"

// A zone's names as they stood at one serial, for transfers: read beside
// the feed, which goes on meanwhile, and set back by the journal.

// Named is a name of the index with its node; a nil node is a name left
// out.
type Named struct {
	Name string
	Node *Node
}

// nameChunk is how many names a chunk of a zone's copy holds: a small team
// zone on a node of a million names takes one, not the whole index's size,
// and a large zone's copy grows without copying what it holds.
const nameChunk = 1 << 14

// ZoneNames is every name of the zone called name (not of a zone below
// it) with its node as they stood at one serial, in chunks, that serial,
// and the zone as it stood then (nil when there is none). The zone's names
// are copied shard by shard while the feed goes on; then the names the
// journal says changed since the serial are put back as they were at it.
// Nodes are never changed once in the index, so the copy is of pointers
// (24 bytes a name), and it costs the zone's names, not the node's. When
// the journal no longer reaches back that far (a domain or a snapshot
// reset it meanwhile), the copy is made again under the journal's lock,
// which holds the feed up while it runs.
func (ix *Index) ZoneNames(name string) ([][]Named, uint32, *Zone) {
	ix.jr.mu.Lock()
	z, serial := (*ix.zones.Load())[name], ix.serial.Load()
	ix.jr.mu.Unlock()
	if z == nil {
		return nil, 0, nil
	}
	if ix.copying != nil {
		ix.copying()
	}
	chunks := copyNames(z.Names)
	ix.jr.mu.Lock()
	changed, old, ok := ix.jr.since(name, serial)
	if now := (*ix.zones.Load())[name]; !ok || now != z {
		z, serial = now, ix.serial.Load()
		chunks, changed = nil, nil
		if z != nil {
			chunks = copyNames(z.Names)
		}
	}
	ix.jr.mu.Unlock()
	if len(changed) > 0 {
		chunks = asAt(chunks, changed, old)
	}
	return chunks, serial, z
}

// copyNames copies the names of t, one shard at a time.
func copyNames(t *Table) [][]Named {
	var chunks [][]Named
	var c []Named
	size := 64 // a team zone's names take one small chunk, a large zone's grow to nameChunk
	t.Each(func(name string, n *Node) {
		if len(c) == cap(c) {
			if c != nil {
				chunks = append(chunks, c)
			}
			c = make([]Named, 0, size)
			size = min(nameChunk, 4*size)
		}
		c = append(c, Named{name, n})
	})
	if len(c) > 0 {
		chunks = append(chunks, c)
	}
	return chunks
}

// asAt puts the changed names back as they were (old; nil: the name did
// not exist then, and is left out).
func asAt(chunks [][]Named, changed []string, old map[string]*Node) [][]Named {
	pending := make(map[string]*Node, len(changed))
	for _, n := range changed {
		pending[n] = old[n]
	}
	for _, c := range chunks {
		for i := range c {
			if o, ok := pending[c[i].Name]; ok {
				delete(pending, c[i].Name)
				c[i].Node = o
			}
		}
	}
	var rest []Named // deleted since, or not reached by the copy
	for _, n := range changed {
		if o, ok := pending[n]; ok && o != nil {
			rest = append(rest, Named{n, o})
		}
	}
	if len(rest) > 0 {
		chunks = append(chunks, rest)
	}
	return chunks
}

// Chained is a name of a signed zone's chain with its key and its node
// (nil: a pinned name no hostname holds).
type Chained struct {
	Key, Name string
	Node      *Node
}

// ChainAt is the chain of the signed zone called name at one serial, for
// an AXFR: its names in the chain's order with their nodes, the serial,
// and the zone then; nil when the zone is not signed here. The keys are
// copied under the journal's lock (a string header a name: a million in a
// few ms, and no sort); the nodes are read after it, and the journal sets
// back those that changed since. When the journal no longer reaches back
// (a domain or a snapshot reset it meanwhile), it is all read again under
// the lock, which holds the feed up while it runs.
func (ix *Index) ChainAt(name string) ([]Chained, uint32, *Zone) {
	ix.jr.mu.Lock()
	z, serial := (*ix.zones.Load())[name], ix.serial.Load()
	if z == nil || z.Names.order == nil {
		ix.jr.mu.Unlock()
		return nil, 0, nil
	}
	keys := z.Names.order.Keys()
	ix.jr.mu.Unlock()
	if ix.copying != nil {
		ix.copying()
	}
	out := chainedOf(z, keys)
	ix.jr.mu.Lock()
	defer ix.jr.mu.Unlock()
	_, old, ok := ix.jr.since(name, serial)
	if now := (*ix.zones.Load())[name]; !ok || now != z {
		z, serial = now, ix.serial.Load()
		if z == nil || z.Names.order == nil {
			return nil, 0, nil
		}
		return chainedOf(z, z.Names.order.Keys()), serial, z
	}
	for i := range out {
		if n, changed := old[out[i].Name]; changed {
			out[i].Node = n
		}
	}
	return out, serial, z
}

// chainedOf are keys of z's chain with their names and nodes now.
func chainedOf(z *Zone, keys []string) []Chained {
	d := z.Denial()
	out := make([]Chained, len(keys))
	for i, k := range keys {
		n := d.Name(k)
		out[i] = Chained{Key: k, Name: n, Node: z.Names.Get(n)}
	}
	return out
}

// Diff is what a signed zone's IXFR is made from, as it stands under the
// journal's lock: Changes, the feed's clock at both ends, and the zone's
// order now.
type Diff struct {
	Zone *Zone
	// Then is the zone as it stood at the secondary's serial: another
	// version when its keys changed since (a rollover's step), else Zone.
	Then     *Zone
	Cur      uint32
	Names    []string
	Old, Now map[string]*Node
	HourThen int64 // the clock at the secondary's serial
	HourNow  int64 // the clock at Cur
	Order    *chain.Order
}

// WithChanges calls f with the Diff of the signed zone called name since
// serial, under the journal's lock (the feed waits: f must be quick and
// must not keep Order). It returns false, without calling f, when the
// journal or the clock does not reach back to serial, or the zone has no
// order (not signed here).
func (ix *Index) WithChanges(name string, serial uint32, f func(d *Diff)) bool {
	ix.jr.mu.Lock()
	defer ix.jr.mu.Unlock()
	z, cur, names, old, now, ok := ix.changes(name, serial)
	if !ok || z.Names.order == nil {
		return false
	}
	then, ok1 := ix.jr.clockAt(serial)
	hour, ok2 := ix.jr.clockAt(cur)
	if !ok1 || !ok2 {
		return false
	}
	was := ix.jr.zoneAt(name, serial)
	if was == nil {
		was = z
	}
	f(&Diff{Zone: z, Then: was, Cur: cur, Names: names, Old: old, Now: now, HourThen: then, HourNow: hour, Order: z.Names.order})
	return true
}

// Changes is what the zone called name changed since serial, for an IXFR:
// the zone and the serial as they stood when read, the names changed, what
// they held at serial (old: nil, the name did not exist) and what they hold
// now (nil: gone). ok is false when the journal does not reach back to
// serial, or there is no such zone.
func (ix *Index) Changes(name string, serial uint32) (z *Zone, cur uint32, names []string, old, now map[string]*Node, ok bool) {
	ix.jr.mu.Lock()
	defer ix.jr.mu.Unlock()
	return ix.changes(name, serial)
}

// changes is Changes; the caller holds the journal's lock.
func (ix *Index) changes(name string, serial uint32) (z *Zone, cur uint32, names []string, old, now map[string]*Node, ok bool) {
	z = (*ix.zones.Load())[name] // as it stands at the serial read with it
	names, old, ok = ix.jr.since(name, serial)
	if !ok || z == nil {
		return nil, 0, nil, nil, nil, false
	}
	now = make(map[string]*Node, len(names))
	for _, n := range names {
		now[n] = z.Names.Get(n)
	}
	return z, ix.serial.Load(), names, old, now, true
}
