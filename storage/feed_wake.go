package storage

import (
	"strconv"
	"time"

	"github.com/lib/pq"
)

// What makes the feed read: this node's own commits (WakeFor, told the
// hostnames they changed by hint), other nodes' NOTIFY on PostgreSQL
// (listen), and anyone's Wake. Run's poll covers what none of them tells.

// WakeFor asks the feed for change id, whose commit is done: unless a
// read that begins after now is due, or one runs that began after the
// same change was asked for (either finds it), the feed looks again. A write's commit, each of its waiters and its NOTIFY ask
// for its change, one after the other: a read for each would find
// nothing new half the time.
func (f *Feed) WakeFor(id int64) {
	f.mu.Lock()
	wake := false
	switch {
	case f.due:
		f.announced[id], f.skipped = true, true
	case f.reading && f.covered[id]:
		f.skipped = true
	default:
		f.due, f.announced, wake = true, map[int64]bool{id: true}, true
	}
	f.mu.Unlock()
	if wake {
		f.Wake()
	}
}

// maxHinted bounds hinted: past it the feed reads the rows apart, as
// for another node's changes.
const maxHinted = 256

// hint tells the feed the changes a write of this node committed, before
// it asks for them (WakeFor): the read that finds them reads the rows of
// their hostnames in the same round trip (ChangesServed), instead of in
// one of its own after.
func (f *Feed) hint(cs []Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		if c.Kind != KindHostname || len(f.hinted) >= maxHinted {
			continue
		}
		if f.hinted == nil {
			f.hinted = map[string]bool{}
		}
		f.hinted[c.Ref] = true
	}
}

// Wake asks the feed to look for changes now.
func (f *Feed) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// has reports whether the feed has applied everything up to the change id
// in payload, with no gap left to read again.
func (f *Feed) has(payload string) bool {
	id, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loaded && id <= f.last && len(f.gaps) == 0
}

// listen subscribes to the store's NOTIFY channel; every notification, and
// every reconnect (when notifications may have been lost), wakes the feed.
func (f *Feed) listen() (stop func()) {
	l := pq.NewListener(f.store.dsn, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil {
			f.log.Warn("change feed: listener", "event", ev, "err", err)
		}
	})
	if err := l.Listen(NotifyChannel); err != nil {
		f.log.Warn("change feed: LISTEN failed; polling only until it reconnects", "err", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range l.Notify {
			if n == nil { // the listener reconnected: notifications may be lost
				f.Wake()
				continue
			}
			if f.has(n.Extra) {
				continue // this node's own commit, applied already
			}
			if id, err := strconv.ParseInt(n.Extra, 10, 64); err == nil {
				f.WakeFor(id) // perhaps being read already: this node's own
				continue
			}
			f.Wake()
		}
	}()
	return func() {
		l.Close()
		<-done
	}
}
