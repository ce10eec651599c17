package storage

import "testing"

// A change whose commit was done before a read of the feed began (it was
// asked for then), or before one that is due begins, is that read's to
// find: asking for it again starts no second read.
func TestWakeFor(t *testing.T) {
	cases := []struct {
		name    string
		due     bool
		reading bool
		covered map[int64]bool // asked for before the running read began
		id      int64
		wakes   bool
	}{
		{"no read running", false, false, nil, 5, true},
		{"a read due, not begun", true, false, nil, 11, false},
		{"asked for before the read began", false, true, map[int64]bool{10: true}, 10, false},
		// A lower id than one asked for before is no sign: ids are taken
		// before commits, not in their order.
		{"another, lower id", false, true, map[int64]bool{10: true}, 9, true},
		{"asked for after it began", false, true, map[int64]bool{10: true}, 11, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &Feed{wake: make(chan struct{}, 1), due: c.due, reading: c.reading, covered: c.covered}
			if c.due {
				f.announced = map[int64]bool{}
			}
			f.WakeFor(c.id)
			if woke := len(f.wake) == 1; woke != c.wakes {
				t.Errorf("woke %v, want %v", woke, c.wakes)
			}
			if f.skipped == c.wakes {
				t.Errorf("skipped %v, want %v", f.skipped, !c.wakes)
			}
			if asked := f.announced[c.id] || f.covered[c.id]; !asked {
				t.Errorf("change %d is not noted as asked for", c.id)
			}
		})
	}
}
