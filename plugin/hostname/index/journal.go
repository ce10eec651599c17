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
	if j.zones == nil {
		j.zones = map[string]*zoneJournal{}
	}
	zj := j.zones[zone]
	if zj == nil {
		zj = &zoneJournal{floor: j.floor}
		j.zones[zone] = zj
	}
	zj.entries = append(zj.entries, journalEntry{serial: serial, name: name, old: old})
	j.order = append(j.order, journalRef{zone: zone, serial: serial})
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
