package index

import (
	"time"

	"github.com/hostmint/hostmint/storage"
)

// An index set by hand, for the tests and benchmarks of what answers and
// transfers from it (the plugin's); nothing else calls these.

// SetZones makes zs the index's zone set.
func (ix *Index) SetZones(zs Set) { ix.zones.Store(&zs) }

// SetSerial moves the index to serial, with a change written now (the
// feed's clock).
func (ix *Index) SetSerial(serial uint32) {
	ix.serial.Store(serial)
	ix.jr.tick(serial, time.Now().UnixMilli())
}

// Tick notes a change at serial written at unixMilli (the feed's clock),
// under Freeze.
func (ix *Index) Tick(serial uint32, unixMilli int64) { ix.jr.tick(serial, unixMilli) }

// ChangeDomains makes zs the zone set at serial, as a change of domains
// does, under Freeze: the journal notes what changed from the zone set
// before (a change of keys alone keeps IXFRs).
func (ix *Index) ChangeDomains(zs Set, serial uint32) {
	prev := *ix.zones.Load()
	ix.zones.Store(&zs)
	ix.journalDomains(prev, zs, false, serial)
	ix.SetSerial(serial)
}

// KeepOrders gives every zone with a transfer signer its canonical order,
// as a load does.
func (ix *Index) KeepOrders() {
	ix.keepOrders(*ix.zones.Load())
}

// SetLoaded says whether the first snapshot is in.
func (ix *Index) SetLoaded(loaded bool) { ix.loaded.Store(loaded) }

// Put sets name's node in the zone that holds it; false when none does.
func (ix *Index) Put(name string, n *Node) bool { return ix.zones.Load().Put(name, n) }

// PutHostname puts h's names, from its rows as they stand at now, as the
// change feed applies a change to it (but for the journal).
func (ix *Index) PutHostname(h *storage.Hostname, recs []storage.Record, chals []storage.Challenge, now int64) {
	ix.hostname(*ix.zones.Load(), h, recs, chals, now)
}

// Freeze holds the feed's lock, as a batch of changes being applied does,
// until Thaw: what is done meanwhile, a transfer sees whole or not at all.
func (ix *Index) Freeze() { ix.jr.mu.Lock() }

// Thaw lets go of Freeze's lock.
func (ix *Index) Thaw() { ix.jr.mu.Unlock() }

// Journal notes, under Freeze, that name in zone held old before the
// change at serial.
func (ix *Index) Journal(serial uint32, zone, name string, old *Node) {
	ix.jr.add(serial, zone, name, old)
}

// ResetJournal starts the journal afresh at serial, under Freeze.
func (ix *Index) ResetJournal(serial uint32) { ix.jr.reset(serial) }

// OnCopy runs f in a zone transfer's copy after it has read the serial and
// before it copies the names: the feed's window.
func (ix *Index) OnCopy(f func()) { ix.copying = f }
