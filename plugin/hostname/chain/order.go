package chain

import "slices"

// Order is a zone's chain: the keys (Denial.Key) of its members in the
// chain's order, cyclic, the apex and the zone's nameservers pinned in it
// (members whatever their nodes hold). Sorted blocks of at most blockMax
// keys, so a change costs a block's length and a search, not the zone's
// size, and the set costs a string header a name. It does not lock: its
// one writer (the feed) and its readers take the index's journal lock.
type Order struct {
	d      Denial
	pinned map[string]bool
	blocks [][]string
	n      int
}

const blockMax = 512

// NewOrder is d's chain of keys (sorted by d.Compare, each once), with
// the names pinned (the apex among them) in it whatever they hold.
func NewOrder(d Denial, keys []string, pinned ...string) *Order {
	o := &Order{d: d, pinned: map[string]bool{}}
	for len(keys) > 0 {
		k := min(len(keys), blockMax/2)
		o.blocks = append(o.blocks, slices.Clone(keys[:k]))
		keys = keys[k:]
	}
	o.n = 0
	for _, b := range o.blocks {
		o.n += len(b)
	}
	for _, name := range pinned {
		o.Insert(d.Key(name))
		o.pinned[d.Key(name)] = true
	}
	return o
}

// Denial is the chain's kind.
func (o *Order) Denial() Denial { return o.d }

// Len is the number of keys.
func (o *Order) Len() int { return o.n }

// find is the block where key is or would go, and its place there.
func (o *Order) find(key string) (b, i int, found bool) {
	b, _ = slices.BinarySearchFunc(o.blocks, key, func(blk []string, k string) int {
		return o.d.Compare(blk[len(blk)-1], k)
	})
	if b == len(o.blocks) {
		if b == 0 {
			return 0, 0, false
		}
		return b - 1, len(o.blocks[b-1]), false // after every key
	}
	i, found = slices.BinarySearchFunc(o.blocks[b], key, o.d.Compare)
	return b, i, found
}

// Has reports whether key is in the chain.
func (o *Order) Has(key string) bool {
	_, _, found := o.find(key)
	return found
}

// Pinned reports whether key is a member whatever its name holds.
func (o *Order) Pinned(key string) bool { return o.pinned[key] }

// Insert adds key; one already in changes nothing.
func (o *Order) Insert(key string) {
	if len(o.blocks) == 0 {
		o.blocks, o.n = [][]string{{key}}, 1
		return
	}
	b, i, found := o.find(key)
	if found {
		return
	}
	o.blocks[b] = slices.Insert(o.blocks[b], i, key)
	o.n++
	if blk := o.blocks[b]; len(blk) > blockMax {
		half := slices.Clone(blk[len(blk)/2:])
		o.blocks[b] = slices.Clip(blk[:len(blk)/2])
		o.blocks = slices.Insert(o.blocks, b+1, half)
	}
}

// Delete removes key, if it is in and not pinned.
func (o *Order) Delete(key string) {
	if o.pinned[key] {
		return
	}
	b, i, found := o.find(key)
	if !found {
		return
	}
	o.blocks[b] = slices.Delete(o.blocks[b], i, i+1)
	o.n--
	if len(o.blocks[b]) == 0 {
		o.blocks = slices.Delete(o.blocks, b, b+1)
	}
}

// Next is the first key after key (in the chain or not); past the last,
// the first, and wrapped is true. An empty chain gives "".
func (o *Order) Next(key string) (next string, wrapped bool) {
	if len(o.blocks) == 0 {
		return "", true
	}
	b, i, found := o.find(key)
	if found {
		i++
	}
	if i == len(o.blocks[b]) {
		b, i = b+1, 0
	}
	if b == len(o.blocks) {
		return o.blocks[0][0], true
	}
	return o.blocks[b][i], false
}

// Prev is the last key before key (in the chain or not); before the
// first, the last.
func (o *Order) Prev(key string) string {
	if len(o.blocks) == 0 {
		return ""
	}
	b, i, _ := o.find(key)
	if i == 0 {
		if b == 0 {
			last := o.blocks[len(o.blocks)-1]
			return last[len(last)-1]
		}
		return o.blocks[b-1][len(o.blocks[b-1])-1]
	}
	return o.blocks[b][i-1]
}

// Keys are the chain's keys, in order (a copy).
func (o *Order) Keys() []string {
	out := make([]string, 0, o.n)
	for _, blk := range o.blocks {
		out = append(out, blk...)
	}
	return out
}

// Each calls f with every key in order, until f returns false.
func (o *Order) Each(f func(key string) bool) {
	for _, blk := range o.blocks {
		for _, k := range blk {
			if !f(k) {
				return
			}
		}
	}
}
