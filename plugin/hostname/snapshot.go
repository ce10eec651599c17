package hostname

// A zone's names as they stood at one serial, for transfers: read beside
// the feed, which goes on meanwhile, and set back by the journal.

// named is a name of the index with its node; a nil node is a name left
// out.
type named struct {
	name string
	n    *node
}

// nameChunk is how many names a chunk of a zone's copy holds: a small team
// zone on a node of a million names takes one, not the whole index's size,
// and a large zone's copy grows without copying what it holds.
const nameChunk = 1 << 14

// zoneNames is every name of the zone called name (not of a zone below
// it) with its node as they stood at one serial, in chunks, that serial,
// and the zone as it stood then (nil when there is none). The zone's names
// are copied shard by shard while the feed goes on; then the names the
// journal says changed since the serial are put back as they were at it.
// Nodes are never changed once in the index, so the copy is of pointers
// (24 bytes a name), and it costs the zone's names, not the node's. When
// the journal no longer reaches back that far (a domain or a snapshot
// reset it meanwhile), the copy is made again under the journal's lock,
// which holds the feed up while it runs.
func (ix *Index) zoneNames(name string) ([][]named, uint32, *zone) {
	ix.jr.mu.Lock()
	z, serial := (*ix.zones.Load())[name], ix.serial.Load()
	ix.jr.mu.Unlock()
	if z == nil {
		return nil, 0, nil
	}
	if ix.copying != nil {
		ix.copying()
	}
	chunks := copyNames(z.names)
	ix.jr.mu.Lock()
	changed, old, ok := ix.jr.since(name, serial)
	if now := (*ix.zones.Load())[name]; !ok || now != z {
		z, serial = now, ix.serial.Load()
		chunks, changed = nil, nil
		if z != nil {
			chunks = copyNames(z.names)
		}
	}
	ix.jr.mu.Unlock()
	if len(changed) > 0 {
		chunks = asAt(chunks, changed, old)
	}
	return chunks, serial, z
}

// copyNames copies the names of t, one shard at a time.
func copyNames(t *nameTable) [][]named {
	var chunks [][]named
	var c []named
	size := 64 // a team zone's names take one small chunk, a large zone's grow to nameChunk
	t.each(func(name string, n *node) {
		if len(c) == cap(c) {
			if c != nil {
				chunks = append(chunks, c)
			}
			c = make([]named, 0, size)
			size = min(nameChunk, 4*size)
		}
		c = append(c, named{name, n})
	})
	if len(c) > 0 {
		chunks = append(chunks, c)
	}
	return chunks
}

// asAt puts the changed names back as they were (old; nil: the name did
// not exist then, and is left out).
func asAt(chunks [][]named, changed []string, old map[string]*node) [][]named {
	pending := make(map[string]*node, len(changed))
	for _, n := range changed {
		pending[n] = old[n]
	}
	for _, c := range chunks {
		for i := range c {
			if o, ok := pending[c[i].name]; ok {
				delete(pending, c[i].name)
				c[i].n = o
			}
		}
	}
	var rest []named // deleted since, or not reached by the copy
	for _, n := range changed {
		if o, ok := pending[n]; ok && o != nil {
			rest = append(rest, named{n, o})
		}
	}
	if len(rest) > 0 {
		chunks = append(chunks, rest)
	}
	return chunks
}

// changes is what the zone called name changed since serial, for an IXFR:
// the zone and the serial as they stood when read, the names changed, what
// they held at serial (old: nil, the name did not exist) and what they hold
// now (nil: gone). ok is false when the journal does not reach back to
// serial, or there is no such zone.
func (ix *Index) changes(name string, serial uint32) (z *zone, cur uint32, names []string, old, now map[string]*node, ok bool) {
	ix.jr.mu.Lock()
	defer ix.jr.mu.Unlock()
	z = (*ix.zones.Load())[name] // as it stands at the serial read with it
	names, old, ok = ix.jr.since(name, serial)
	if !ok || z == nil {
		return nil, 0, nil, nil, nil, false
	}
	now = make(map[string]*node, len(names))
	for _, n := range names {
		now[n] = z.names.get(n)
	}
	return z, ix.serial.Load(), names, old, now, true
}
