package chain

import "slices"

// Order is a zone's names in canonical order, the apex left out (it is
// first, always): sorted blocks of at most blockMax names, so a change
// costs a block's length and a search, not the zone's size, and the set
// costs a string header a name (the strings are the index's own). It does
// not lock: its one writer (the feed) and its readers take the index's
// journal lock.
type Order struct {
	apex   string
	blocks [][]string
	n      int
}

const blockMax = 512

// NewOrder is the order of names (sorted canonically, each once, not the
// apex) below apex.
func NewOrder(apex string, names []string) *Order {
	o := &Order{apex: apex, n: len(names)}
	for len(names) > 0 {
		k := min(len(names), blockMax/2)
		o.blocks = append(o.blocks, slices.Clone(names[:k]))
		names = names[k:]
	}
	return o
}

// Apex is the zone's apex.
func (o *Order) Apex() string { return o.apex }

// Len is the number of names, the apex not counted.
func (o *Order) Len() int { return o.n }

// find is the block where name is or would go, and its place there.
func (o *Order) find(name string) (b, i int, found bool) {
	b, _ = slices.BinarySearchFunc(o.blocks, name, func(blk []string, n string) int {
		return Compare(blk[len(blk)-1], n)
	})
	if b == len(o.blocks) {
		if b == 0 {
			return 0, 0, false
		}
		return b - 1, len(o.blocks[b-1]), false // after every name
	}
	i, found = slices.BinarySearchFunc(o.blocks[b], name, Compare)
	return b, i, found
}

// Has reports whether name is in the order.
func (o *Order) Has(name string) bool {
	_, _, found := o.find(name)
	return found
}

// Insert adds name; the apex, or a name already in, changes nothing.
func (o *Order) Insert(name string) {
	if name == o.apex {
		return
	}
	if len(o.blocks) == 0 {
		o.blocks, o.n = [][]string{{name}}, 1
		return
	}
	b, i, found := o.find(name)
	if found {
		return
	}
	o.blocks[b] = slices.Insert(o.blocks[b], i, name)
	o.n++
	if blk := o.blocks[b]; len(blk) > blockMax {
		half := slices.Clone(blk[len(blk)/2:])
		o.blocks[b] = slices.Clip(blk[:len(blk)/2])
		o.blocks = slices.Insert(o.blocks, b+1, half)
	}
}

// Delete removes name, if it is in.
func (o *Order) Delete(name string) {
	b, i, found := o.find(name)
	if !found {
		return
	}
	o.blocks[b] = slices.Delete(o.blocks[b], i, i+1)
	o.n--
	if len(o.blocks[b]) == 0 {
		o.blocks = slices.Delete(o.blocks, b, b+1)
	}
}

// Next is the first name after name (in or not), or the apex after the
// last (wrapped true).
func (o *Order) Next(name string) (next string, wrapped bool) {
	if len(o.blocks) == 0 {
		return o.apex, true
	}
	b, i, found := o.find(name)
	if found {
		i++
	}
	if i == len(o.blocks[b]) {
		b, i = b+1, 0
	}
	if b == len(o.blocks) {
		return o.apex, true
	}
	return o.blocks[b][i], false
}

// Prev is the last name before name (in or not), or the apex.
func (o *Order) Prev(name string) string {
	if len(o.blocks) == 0 || name == o.apex {
		return o.apex
	}
	b, i, _ := o.find(name)
	if i == 0 {
		if b == 0 {
			return o.apex
		}
		return o.blocks[b-1][len(o.blocks[b-1])-1]
	}
	return o.blocks[b][i-1]
}

// Each calls f with every name in order, until f returns false.
func (o *Order) Each(f func(name string) bool) {
	for _, blk := range o.blocks {
		for _, n := range blk {
			if !f(n) {
				return
			}
		}
	}
}
