package index

import (
	"hash/maphash"
	"sync"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
)

// Table maps lowercase FQDNs to their nodes: plain maps in shards, each
// behind a read-write lock. A sync.Map boxes every key and allocates an
// entry object per name, which at a million names is most of the index's
// memory; a plain map holds a string header and a pointer per slot. Readers
// take a shard's read lock only, and the feed (the one writer) holds a
// shard's write lock for one map operation, so answers never wait for long.
type Table struct {
	shards [nameShards]nameShard
	// order is the canonical order of the names that hold records, kept
	// while the zone is signed (its NSEC chain: order.go); nil otherwise.
	// Written by the feed and read by transfers under the journal's lock.
	order *chain.Order
}

const nameShards = 64

type nameShard struct {
	mu sync.RWMutex
	m  map[string]*Node
	_  [32]byte // a cache line of its own: readers of neighbours do not collide
}

var nameSeed = maphash.MakeSeed()

// NewTable makes a table with room for about size names.
func NewTable(size int) *Table {
	t := new(Table)
	for i := range t.shards {
		t.shards[i].m = make(map[string]*Node, size/nameShards)
	}
	return t
}

func (t *Table) shard(name string) *nameShard {
	return &t.shards[maphash.String(nameSeed, name)%nameShards]
}

// Get returns the node at name, or nil.
func (t *Table) Get(name string) *Node {
	s := t.shard(name)
	s.mu.RLock()
	n := s.m[name]
	s.mu.RUnlock()
	return n
}

// Put sets the node at name.
func (t *Table) Put(name string, n *Node) {
	s := t.shard(name)
	s.mu.Lock()
	s.m[name] = n
	s.mu.Unlock()
	t.ordered(name, n)
}

// drop removes name if the hostname of owner still holds it: a released
// name may have been minted again for another hostname meanwhile.
func (t *Table) drop(name string, owner uint64) {
	s := t.shard(name)
	s.mu.Lock()
	n := s.m[name]
	if n != nil && n.Owner == owner {
		delete(s.m, name)
	}
	s.mu.Unlock()
	if n != nil && n.Owner == owner {
		t.ordered(name, nil)
	}
}

// Each calls f with every name and node of t, a shard at a time under its
// read lock (f must not write to t).
func (t *Table) Each(f func(name string, n *Node)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		for name, n := range s.m {
			f(name, n)
		}
		s.mu.RUnlock()
	}
}
