package hostname

import (
	"sync"
)

// journal is what an IXFR is made from: for every name a change replaced,
// the node it held before (nil: none), under the serial the change
// brought. The index keeps it from its load on: the newest journalMax
// names, and up to journalSlack more. A secondary whose serial is older
// than what it holds, or from before a domain changed, gets the whole zone
// instead (RFC 1995's fallback).
type journal struct {
	mu      sync.Mutex
	floor   uint32 // the oldest serial an IXFR can start from
	entries []journalEntry
}

type journalEntry struct {
	serial uint32 // the serial after the change
	zone   string
	name   string
	old    *node
}

// journalMax bounds the journal: a name is a few dozen bytes here, so a
// full journal costs a few MB, and covers minutes of writes at the
// service's highest rates.
const journalMax = 100_000

// reset empties the journal: IXFRs start from serial on.
func (j *journal) reset(serial uint32) {
	j.entries, j.floor = j.entries[:0], serial
}

// add records what name held before the change that brings serial.
func (j *journal) add(serial uint32, zone, name string, old *node) {
	j.entries = append(j.entries, journalEntry{serial: serial, zone: zone, name: name, old: old})
}

// journalSlack is how far past journalMax the journal grows before it is
// trimmed back: each trim copies the entries kept, so trimming a little
// on every batch of a full journal would copy it whole on every write.
const journalSlack = journalMax / 4

// trim drops the oldest changes past journalMax, whole serials at a time,
// once the journal is journalSlack past it.
func (j *journal) trim() {
	if len(j.entries) <= journalMax+journalSlack {
		return
	}
	cut := len(j.entries) - journalMax
	for cut < len(j.entries) && j.entries[cut].serial == j.entries[cut-1].serial {
		cut++
	}
	j.floor = j.entries[cut-1].serial
	j.entries = append(j.entries[:0], j.entries[cut:]...)
}

// since is, for the names of zone changed after serial, what each held at
// serial (the first old node recorded after it), in the order they
// changed; ok is false when the journal does not reach back to serial.
// The caller holds mu.
func (j *journal) since(zone string, serial uint32) (names []string, old map[string]*node, ok bool) {
	if serialOlder(serial, j.floor) {
		return nil, nil, false
	}
	old = map[string]*node{}
	for _, e := range j.entries {
		if e.zone != zone || !serialOlder(serial, e.serial) {
			continue
		}
		if _, seen := old[e.name]; !seen {
			old[e.name] = e.old
			names = append(names, e.name)
		}
	}
	return names, old, true
}
