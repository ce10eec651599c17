package index

import (
	"slices"
	"sync"
)

// journal is what an IXFR is made from: for every name a change replaced,
// the node it held before (nil: none), under the serial the change
// brought, kept per zone, so that an IXFR of a zone reads that zone's
// changes only. The index keeps it from its load on: the newest
// journalMax names of all zones together, and up to journalSlack more;
// each zone's journal starts where its oldest trimmed change was (its
// floor), so a busy zone's trimming costs a quiet zone nothing. A
// secondary whose serial is older than its zone's floor, or from before a
// domain changed, gets the whole zone instead (RFC 1995's fallback).
type journal struct {
	mu    sync.Mutex
	floor uint32 // where every zone's journal starts, since the last reset
	zones map[string]*zoneJournal
	order []journalRef // every entry's zone and serial, oldest first (trimming)
	// clock is the feed's clock by serial (clock.go): an hourly mark, kept
	// from the last reset on.
	clock []clockMark
}

// zoneJournal is one zone's changes, in serial order.
type zoneJournal struct {
	floor   uint32 // the oldest serial an IXFR of the zone can start from
	entries []journalEntry
	// rekeys are the changes of the zone's key set (a rollover's steps),
	// each with the zone as it stood before: an IXFR across one states the
	// zone's signatures again, not the whole zone.
	rekeys []zoneMark
}

// zoneMark is a zone's change of keys at serial, and the zone before it.
type zoneMark struct {
	serial uint32
	old    *Zone
}

type journalEntry struct {
	serial uint32 // the serial after the change
	name   string
	old    *Node
}

type journalRef struct {
	zone   string
	serial uint32
}

// journalMax bounds the journal: a name is a few dozen bytes here, so a
// full journal costs a few MB, and covers minutes of writes at the
// service's highest rates.
const journalMax = 100_000

// reset empties the journal: IXFRs start from serial on.
func (j *journal) reset(serial uint32) {
	j.zones, j.order, j.floor = map[string]*zoneJournal{}, j.order[:0], serial
	j.trimClock(serial)
}

// add records what name, of zone, held before the change that brings serial.
func (j *journal) add(serial uint32, zone, name string, old *Node) {
	zj := j.zoneOf(zone)
	zj.entries = append(zj.entries, journalEntry{serial: serial, name: name, old: old})
	j.order = append(j.order, journalRef{zone: zone, serial: serial})
}

// zoneOf is the journal of zone, made if need be.
func (j *journal) zoneOf(zone string) *zoneJournal {
	if j.zones == nil {
		j.zones = map[string]*zoneJournal{}
	}
	zj := j.zones[zone]
	if zj == nil {
		zj = &zoneJournal{floor: j.floor}
		j.zones[zone] = zj
	}
	return zj
}

// rekeyed notes that zone's key set changed at serial; old is the zone
// before.
func (j *journal) rekeyed(zone string, serial uint32, old *Zone) {
	zj := j.zoneOf(zone)
	zj.rekeys = append(zj.rekeys, zoneMark{serial, old})
}

// resetZone starts zone's journal afresh at serial (its IXFRs from before
// are whole zones): a change of the zone an IXFR cannot state.
func (j *journal) resetZone(zone string, serial uint32) {
	j.order = slices.DeleteFunc(j.order, func(r journalRef) bool { return r.zone == zone })
	*j.zoneOf(zone) = zoneJournal{floor: serial}
}

// zoneAt is the zone as it stood at serial, when its keys changed since;
// nil when they did not.
func (j *journal) zoneAt(zone string, serial uint32) *Zone {
	if zj := j.zones[zone]; zj != nil {
		for _, m := range zj.rekeys {
			if SerialOlder(serial, m.serial) {
				return m.old
			}
		}
	}
	return nil
}

// journalSlack is how far past journalMax the journal grows before it is
// trimmed back: each trim copies the entries kept, so trimming a little
// on every batch of a full journal would copy it whole on every write.
const journalSlack = journalMax / 4

// trim drops the oldest changes past journalMax, whole serials at a time,
// once the journal is journalSlack past it; each zone that loses changes
// starts at the newest serial it lost.
func (j *journal) trim() {
	if len(j.order) <= journalMax+journalSlack {
		return
	}
	cut := len(j.order) - journalMax
	for cut < len(j.order) && j.order[cut].serial == j.order[cut-1].serial {
		cut++
	}
	dropped := map[string]int{}
	for _, r := range j.order[:cut] {
		dropped[r.zone]++
	}
	for zone, n := range dropped {
		zj := j.zones[zone]
		zj.floor = zj.entries[n-1].serial
		zj.entries = append(zj.entries[:0:0], zj.entries[n:]...)
		zj.rekeys = slices.DeleteFunc(zj.rekeys, func(m zoneMark) bool { return !SerialOlder(zj.floor, m.serial) })
	}
	j.order = append(j.order[:0], j.order[cut:]...)
}

// since is, for the names of zone changed after serial, what each held at
// serial (the first old node recorded after it), in the order they
// changed; ok is false when the zone's journal does not reach back to
// serial. It reads the zone's changes after serial only. The caller holds
// mu.
func (j *journal) since(zone string, serial uint32) (names []string, old map[string]*Node, ok bool) {
	floor, entries := j.floor, []journalEntry(nil)
	if zj := j.zones[zone]; zj != nil {
		floor, entries = zj.floor, zj.entries
	}
	if SerialOlder(serial, floor) {
		return nil, nil, false
	}
	// Entries are in serial order: the first one after serial, by halves.
	i, _ := slices.BinarySearchFunc(entries, serial, func(e journalEntry, s uint32) int {
		if SerialOlder(s, e.serial) {
			return 1
		}
		return -1
	})
	old = map[string]*Node{}
	for _, e := range entries[i:] {
		if _, seen := old[e.name]; !seen {
			old[e.name] = e.old
			names = append(names, e.name)
		}
	}
	return names, old, true
}

// SerialOlder reports whether serial a is older than b in serial number
// arithmetic (RFC 1982): the feed's ids wrap at 2^32 as SOA serials.
func SerialOlder(a, b uint32) bool { return a != b && b-a < 1<<31 }

// journalDomains notes in the journal how the domains changed at serial,
// from prev to zs (names moved: moved). A domain's CAA policy, its signing
// and its denial stand at every name, and zones added or removed move
// names between zones: an IXFR cannot say what changed, so the zone's
// secondaries, or every zone's, transfer it whole. A change of keys alone
// (a rollover's step) is noted, and IXFRs across it restate the zone's
// signatures (Diff.Then). Any other change (a status) changes no record.
func (ix *Index) journalDomains(prev, zs Set, moved bool, serial uint32) {
	if moved || len(prev) != len(zs) {
		ix.jr.reset(serial)
		return
	}
	for name, z := range zs {
		p := prev[name]
		switch {
		case p == nil:
			ix.jr.reset(serial)
			return
		case !sameRecords(p, z):
			ix.jr.resetZone(name, serial)
		case p.DNSKEY != z.DNSKEY:
			ix.jr.rekeyed(name, serial, p)
		}
	}
}

// sameRecords reports whether two versions of a zone serve the same
// records at every name but their signatures: the same CAA policy,
// signed alike (and opened alike here), with the same denial.
func sameRecords(a, b *Zone) bool {
	if a.Signed != b.Signed || a.NSEC3 != b.NSEC3 || (a.Chain == nil) != (b.Chain == nil) || len(a.CAA) != len(b.CAA) {
		return false
	}
	for i := range a.CAA {
		if a.CAA[i].String() != b.CAA[i].String() {
			return false
		}
	}
	return true
}
