package hostname

import (
	"slices"
	"testing"
)

func TestJournal(t *testing.T) {
	t.Parallel()
	var j journal
	j.reset(10)
	a, b := &node{}, &node{}
	j.add(11, "example.org.", "x.example.org.", nil)
	j.add(12, "example.org.", "x.example.org.", a)
	j.add(12, "example.net.", "y.example.net.", b)
	j.add(13, "example.org.", "z.example.org.", b)

	names, old, ok := j.since("example.org.", 10)
	if !ok || !slices.Equal(names, []string{"x.example.org.", "z.example.org."}) || old["x.example.org."] != nil || old["z.example.org."] != b {
		t.Errorf("since 10: %v %v %v; want x (held nothing then) and z", names, old, ok)
	}
	names, old, _ = j.since("example.org.", 11)
	if !slices.Equal(names, []string{"x.example.org.", "z.example.org."}) || old["x.example.org."] != a {
		t.Errorf("since 11: %v %v; want x as it was at 11 (a) and z", names, old)
	}
	if names, _, ok := j.since("example.org.", 13); !ok || len(names) != 0 {
		t.Errorf("since the newest serial: %v %v, want nothing changed", names, ok)
	}
	if _, _, ok := j.since("example.org.", 9); ok {
		t.Errorf("a serial before the journal's floor was answered")
	}

	// Trimming drops whole serials, oldest first, and moves the floor.
	var k journal
	k.reset(0)
	for i := range journalMax + 3 {
		k.add(uint32(1+i/2), "example.org.", "n.example.org.", nil)
	}
	k.trim()
	if len(k.entries) > journalMax || k.entries[0].serial == k.floor || k.entries[0].serial != k.floor+1 {
		t.Errorf("after trim: %d entries, floor %d, first serial %d", len(k.entries), k.floor, k.entries[0].serial)
	}
	if _, _, ok := k.since("example.org.", k.floor-1); ok {
		t.Errorf("a serial below the trimmed floor was answered")
	}
	if _, _, ok := k.since("example.org.", k.floor); !ok {
		t.Errorf("the floor itself must still be answered")
	}
}
