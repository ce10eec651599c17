package index

import "github.com/hostmint/hostmint/plugin/hostname/chain"

// The feed's clock: the hour of the newest change applied, by serial. A
// signed zone's transfer is signed in the windows of its serial's clock
// (package chain), so every node that follows the feed signs a serial
// alike, and an IXFR can make again the signatures a secondary holds. The
// journal keeps the clock's marks for the serials it reaches back to.

// clockMark is the clock from serial on (until the next mark).
type clockMark struct {
	serial uint32
	hour   int64
}

// tick notes that the change at serial was written at unixMilli. The
// clock never goes back (writers' clocks differ by a little).
func (j *journal) tick(serial uint32, unixMilli int64) {
	h := chain.Hour(unixMilli)
	if n := len(j.clock); n > 0 && (h <= j.clock[n-1].hour || SerialOlder(serial, j.clock[n-1].serial)) {
		return
	}
	j.clock = append(j.clock, clockMark{serial, h})
}

// clockAt is the clock at serial; ok is false when the marks do not reach
// back to it.
func (j *journal) clockAt(serial uint32) (hour int64, ok bool) {
	for i := len(j.clock) - 1; i >= 0; i-- {
		if !SerialOlder(serial, j.clock[i].serial) {
			return j.clock[i].hour, true
		}
	}
	return 0, false
}

// trimClock drops the marks older than floor, but the one in force there.
func (j *journal) trimClock(floor uint32) {
	i := 0
	for i+1 < len(j.clock) && !SerialOlder(floor, j.clock[i+1].serial) {
		i++
	}
	j.clock = append(j.clock[:0], j.clock[i:]...)
}

// Clock is the feed's clock at serial, in hours (chain.Hour); ok is false
// when the index no longer knows it (an IXFR from there is a whole zone).
func (ix *Index) Clock(serial uint32) (hour int64, ok bool) {
	ix.jr.mu.Lock()
	defer ix.jr.mu.Unlock()
	return ix.jr.clockAt(serial)
}
