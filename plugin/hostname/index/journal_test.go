package index

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

func TestJournal(t *testing.T) {
	t.Parallel()
	var j journal
	j.reset(10)
	a, b := &Node{}, &Node{}
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
	for i := range journalMax + journalSlack + 3 {
		k.add(uint32(1+i/2), "example.org.", "n.example.org.", nil)
	}
	k.add(uint32(journalMax), "quiet.example.net.", "q.quiet.example.net.", nil)
	k.trim()
	zj := k.zones["example.org."]
	if len(k.order) > journalMax || zj.entries[0].serial == zj.floor || zj.entries[0].serial != zj.floor+1 {
		t.Errorf("after trim: %d entries, floor %d, first serial %d", len(k.order), zj.floor, zj.entries[0].serial)
	}
	if _, _, ok := k.since("example.org.", zj.floor-1); ok {
		t.Errorf("a serial below the trimmed floor was answered")
	}
	if _, _, ok := k.since("example.org.", zj.floor); !ok {
		t.Errorf("the floor itself must still be answered")
	}
	// A quiet zone keeps its whole history: the busy zone's trim is its own.
	if names, _, ok := k.since("quiet.example.net.", 0); !ok || len(names) != 1 {
		t.Errorf("the quiet zone since 0: %v %v, want its one change", names, ok)
	}
	if names, _, ok := k.since("unchanged.example.com.", 0); !ok || len(names) != 0 {
		t.Errorf("a zone without changes since 0: %v %v, want nothing changed", names, ok)
	}
}

// A snapshot load tells the watchers every zone (a node that fell behind
// the compacted feed loads one, and its secondaries must hear of it), and
// starts the journal at the snapshot's serial.
func TestLoadTouchesEveryZone(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, storage.SQLite)
	ctx := context.Background()
	_, err := st.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		for i, name := range []string{"example.org", "example.net"} {
			if err := tx.InsertDomain(ctx, &storage.Domain{ID: fmt.Sprint("dom", i), Name: name, Status: storage.DomainActive, CreatedAt: 1}); err != nil {
				return err
			}
			if err := tx.Changed(ctx, storage.KindDomain, fmt.Sprint("dom", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ix := New(nil, "")
	var got []string
	defer ix.Watch(func(zones []string) { got = append(got, zones...) })()
	if err := ix.Load(ctx, st.Reader()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"example.net.", "example.org."}) {
		t.Errorf("a load touched %v, want both zones", got)
	}
	if ix.jr.floor != ix.serial.Load() || ix.serial.Load() == 0 {
		t.Errorf("journal floor %d, serial %d: want the journal to start at the snapshot", ix.jr.floor, ix.serial.Load())
	}
}

// A domain added below a served one takes over the names under it, which
// the zone above then gives up; the other names stay where they were.
func TestZoneAdopt(t *testing.T) {
	t.Parallel()
	org := &Zone{Name: "example.org.", Names: NewTable(0)}
	prev := Set{org.Name: org}
	for _, name := range []string{"x.sub.example.org.", "a.b.sub.example.org.", "y.example.org.", "sub.example.org.x.example.org.", "sub.example.org."} {
		org.Names.Put(name, &Node{Owner: Holder(name), Host: true})
	}
	sub := &Zone{Name: "sub.example.org.", Names: NewTable(0)}
	zs := Set{org.Name: org, sub.Name: sub}
	moved := (&zs).adopt(prev)
	for _, m := range moved {
		m.from.drop(m.name, m.n.Owner)
	}
	for name, want := range map[string]*Zone{
		"x.sub.example.org.": sub, "a.b.sub.example.org.": sub, "y.example.org.": org, "sub.example.org.x.example.org.": org,
		"sub.example.org.": sub, // a hostname at the new zone's apex
	} {
		if (&zs).Of(name) != want || want.Names.Get(name) == nil {
			t.Errorf("%s: not in %s's table", name, want.Name)
		}
		other := org
		if want == org {
			other = sub
		}
		if other.Names.Get(name) != nil {
			t.Errorf("%s: still in %s's table too", name, other.Name)
		}
	}
	if len(moved) != 3 {
		t.Errorf("moved %d names, want 3", len(moved))
	}
}

func TestSerialOlder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b  uint32
		older bool
	}{
		{1, 2, true}, {2, 1, false}, {5, 5, false},
		{0xffffffff, 1, true}, // across the wrap
		{1, 0xffffffff, false},
	} {
		if got := SerialOlder(tc.a, tc.b); got != tc.older {
			t.Errorf("SerialOlder(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.older)
		}
	}
}
