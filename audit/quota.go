package audit

import (
	"sync"
	"time"
)

// Refusals take no transaction of the caller's, so a caller with a valid key
// could write one row a request by sending bad ones. Each actor may have
// refusalsPerMinute of them recorded a minute, on each node; the rest are
// counted (Dropped), not written. Writes are never limited here: the rate
// limits of the rules already hold them.
const refusalsPerMinute = 60

// quota counts the refusals recorded per actor in the current minute.
type quota struct {
	mu     sync.Mutex
	minute int64
	used   map[string]int
}

// take reports whether actor may have one more refusal recorded at now.
func (q *quota) take(actor string, now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := now.Unix() / 60; m != q.minute || q.used == nil {
		// A new minute: the counts start again (and the map cannot grow for long).
		q.minute, q.used = m, map[string]int{}
	}
	if q.used[actor] >= refusalsPerMinute {
		return false
	}
	q.used[actor]++
	return true
}
