package hostname

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
	for i := range journalMax + journalSlack + 3 {
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
	ix := NewIndex()
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
