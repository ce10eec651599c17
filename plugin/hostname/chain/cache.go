package chain

// sigCache keeps a zone's transfer signatures by RRset key: an open-
// addressing table of fixed slots, 76 bytes each and an eighth spare, so a
// million-name zone's two million signatures take about 190 MB. (Go's map
// of [64]byte values rounds its size up to a power of two and took 135
// bytes a signature, 300 MB.)
//
// A signature that a transfer will never ask for again is one of a window
// past: every owner's current window started within the last Step, so a
// signature whose window started before that belongs to an owner since
// renewed. When the table is full, those go; if that frees too little
// (writes replaced much of the zone within the week), the table grows by
// a quarter.
type sigCache struct {
	slots []sigSlot
	n     int // slots in use
	limit int // the most in use before a purge: seven eighths of slots
}

type sigSlot struct {
	key       uint64 // 0: empty
	inception uint32 // the window's, for the purge
	sig       [sigLen]byte
}

func newSigCache(entries int) *sigCache {
	size := entries + entries/8 + 1
	return &sigCache{slots: make([]sigSlot, size), limit: size * 7 / 8}
}

// slotKey keeps 0 for empty slots.
func slotKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

// get is the signature kept under key.
func (c *sigCache) get(key uint64) ([sigLen]byte, bool) {
	key = slotKey(key)
	for i := key % uint64(len(c.slots)); ; i = (i + 1) % uint64(len(c.slots)) {
		s := &c.slots[i]
		switch s.key {
		case key:
			return s.sig, true
		case 0:
			return [sigLen]byte{}, false
		}
	}
}

// put keeps sig under key; before must be the inception below which no
// transfer asks again (the purge's line).
func (c *sigCache) put(key uint64, inception uint32, sig [sigLen]byte, before uint32) {
	if c.n >= c.limit {
		c.purge(before)
	}
	key = slotKey(key)
	for i := key % uint64(len(c.slots)); ; i = (i + 1) % uint64(len(c.slots)) {
		s := &c.slots[i]
		if s.key == key {
			return
		}
		if s.key == 0 {
			*s = sigSlot{key: key, inception: inception, sig: sig}
			c.n++
			return
		}
	}
}

// purge makes the table again without the signatures of windows before
// before, a quarter larger if that leaves it more than three quarters
// full: a purge costs the table's size, and comes after an eighth of it
// at least has been put, so a signature put costs a few slots' moves.
func (c *sigCache) purge(before uint32) {
	kept := 0
	for i := range c.slots {
		if s := &c.slots[i]; s.key != 0 && s.inception >= before {
			kept++
		}
	}
	size := len(c.slots)
	if kept > size*3/4 {
		size += size / 4
	}
	old := c.slots
	*c = sigCache{slots: make([]sigSlot, size), limit: size * 7 / 8}
	for i := range old {
		if s := &old[i]; s.key != 0 && s.inception >= before {
			c.put(s.key, s.inception, s.sig, before)
		}
	}
}
