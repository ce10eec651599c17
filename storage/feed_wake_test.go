package storage

import "testing"

// A change whose commit was done before a read of the feed began, or
// before one that is due begins, is that read's to find: asking for it
// again starts no second read.
func TestWakeFor(t *testing.T) {
	cases := []struct {
		name    string
		due     bool
		reading bool
		covers  int64
		id      int64
		wakes   bool
	}{
		{"no read running", false, false, 10, 5, true},
		{"a read due, not begun", true, false, 10, 11, false},
		{"committed before the read began", false, true, 10, 10, false},
		{"committed after it began", false, true, 10, 11, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &Feed{wake: make(chan struct{}, 1), due: c.due, reading: c.reading, covers: c.covers}
			f.WakeFor(c.id)
			if woke := len(f.wake) == 1; woke != c.wakes {
				t.Errorf("woke %v, want %v", woke, c.wakes)
			}
			if f.skipped == c.wakes {
				t.Errorf("skipped %v, want %v", f.skipped, !c.wakes)
			}
			if f.announced != c.id {
				t.Errorf("announced %d, want %d", f.announced, c.id)
			}
		})
	}
}
