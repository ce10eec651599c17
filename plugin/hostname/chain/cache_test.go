package chain

import "testing"

// The cache finds what it keeps; full, it drops the windows before the
// line and keeps the rest; kept mostly current, it grows instead.
func TestSigCache(t *testing.T) {
	t.Parallel()
	c := newSigCache(1000)
	sig := func(k uint64) (s [sigLen]byte) { s[0], s[1] = byte(k), byte(k>>8); return s }
	for k := uint64(0); k < 800; k++ {
		c.put(k, 100, sig(k), 0) // an old window
	}
	for k := uint64(1000); k < 1500; k++ {
		c.put(k, 200, sig(k), 150) // current ones: the old go when it fills
	}
	for k := uint64(1000); k < 1500; k++ {
		if got, ok := c.get(k); !ok || got != sig(k) {
			t.Fatalf("current %d: %v %v", k, got[:2], ok)
		}
	}
	if _, ok := c.get(5); ok {
		t.Error("an old window kept past a purge")
	}
	size := len(c.slots)
	for k := uint64(2000); k < 4000; k++ {
		c.put(k, 200, sig(k), 150)
	}
	if len(c.slots) <= size {
		t.Errorf("all current and over the size: %d slots, was %d", len(c.slots), size)
	}
	for k := uint64(1000); k < 4000; k++ {
		if k >= 1500 && k < 2000 {
			continue
		}
		if got, ok := c.get(k); !ok || got != sig(k) {
			t.Fatalf("after growing, %d: %v %v", k, got[:2], ok)
		}
	}
}
