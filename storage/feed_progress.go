package storage

import (
	"context"
	"time"
)

// What the feed tells those who wait on it: whether it has loaded and
// reads, how far it has applied (WaitApplied, on which a write that must
// be served here waits) and how far behind it is (Lag).

// Loaded reports whether the first snapshot has been loaded.
func (f *Feed) Loaded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loaded
}

// Err is the last error reading the store, nil when the last read worked.
func (f *Feed) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Applied is the id of the newest change applied.
func (f *Feed) Applied() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// WaitApplied blocks until change id has been applied on this node, or ctx ends.
func (f *Feed) WaitApplied(ctx context.Context, id int64) error {
	f.mu.Lock()
	f.waiting++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
	}()
	for {
		f.mu.Lock()
		_, gap := f.gaps[id]
		done := f.loaded && f.last >= id && !gap
		ch := f.progress
		f.mu.Unlock()
		if done {
			return nil
		}
		f.WakeFor(id)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Lag is how far this node is behind: the time since the moment it is
// known to be current to, and the changes its database held that it had
// not applied, at the last read. A writer that has applied everything
// it read is not behind; a read-only node is behind its database's
// heartbeat, which writers stamp each second.
func (f *Feed) Lag() (time.Duration, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.store.readOnly && f.loaded && f.err == nil && f.pending == 0 {
		return 0, 0
	}
	if f.current.IsZero() {
		return 0, f.pending
	}
	return max(0, time.Since(f.current)), f.pending
}

// advance wakes WaitApplied callers; f.mu must be held.
func (f *Feed) advance() {
	close(f.progress)
	f.progress = make(chan struct{})
}

func (f *Feed) waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}
