package hostname

import (
	"hash/maphash"
	"sync"
)

// nameTable maps lowercase FQDNs to their nodes: plain maps in shards, each
// behind a read-write lock. A sync.Map boxes every key and allocates an
// entry object per name, which at a million names is most of the index's
// memory; a plain map holds a string header and a pointer per slot. Readers
// take a shard's read lock only, and the feed (the one writer) holds a
// shard's write lock for one map operation, so answers never wait for long.
type nameTable struct {
	shards [nameShards]nameShard
}

const nameShards = 64

type nameShard struct {
	mu sync.RWMutex
	m  map[string]*node
	_  [32]byte // a cache line of its own: readers of neighbours do not collide
}

var nameSeed = maphash.MakeSeed()

// newNameTable makes a table with room for about size names.
func newNameTable(size int) *nameTable {
	t := new(nameTable)
	for i := range t.shards {
		t.shards[i].m = make(map[string]*node, size/nameShards)
	}
	return t
}

func (t *nameTable) shard(name string) *nameShard {
	return &t.shards[maphash.String(nameSeed, name)%nameShards]
}

// get returns the node at name, or nil.
func (t *nameTable) get(name string) *node {
	s := t.shard(name)
	s.mu.RLock()
	n := s.m[name]
	s.mu.RUnlock()
	return n
}

// put sets the node at name.
func (t *nameTable) put(name string, n *node) {
	s := t.shard(name)
	s.mu.Lock()
	s.m[name] = n
	s.mu.Unlock()
}

// drop removes name if the hostname of owner still holds it: a released
// name may have been minted again for another hostname meanwhile.
func (t *nameTable) drop(name string, owner uint64) {
	s := t.shard(name)
	s.mu.Lock()
	if n := s.m[name]; n != nil && n.owner == owner {
		delete(s.m, name)
	}
	s.mu.Unlock()
}

// each calls f with every name and node of t, a shard at a time under its
// read lock (f must not write to t).
func (t *nameTable) each(f func(name string, n *node)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		for name, n := range s.m {
			f(name, n)
		}
		s.mu.RUnlock()
	}
}
