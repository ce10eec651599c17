package storage

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Consumer is what a node keeps in step with the store: Load reads a full
// snapshot, Apply the objects named by a batch of changes. Both re-read
// current rows, so applying a change twice or out of order is harmless.
type Consumer interface {
	Load(ctx context.Context, q Queries) error
	Apply(ctx context.Context, q Queries, changes []Change) error
}

// Feed loads a snapshot, then tails the changes table. On PostgreSQL a
// LISTEN wakes it at once and a poll covers lost notifications and
// reconnects; on SQLite the store's own commits wake it.
//
// Ids come from a sequence, so a transaction can commit after a later one:
// an id skipped over is kept as a gap and asked for again until it shows up
// or it is given up (see gapReads).
//
// A node that falls behind the compacted feed (changes after the last one
// it applied were deleted, see compact.go) loads a full snapshot again.
type Feed struct {
	store    *Store
	consumer Consumer
	poll     time.Duration
	log      *slog.Logger

	// Reloaded, if set before Run, hears of each snapshot loaded again
	// because this node fell behind the compacted feed.
	Reloaded func()

	wake chan struct{}

	mu   sync.Mutex
	last int64
	// A change whose commit this node heard of (its own writes, their
	// waiters, NOTIFY) is found by a read of the changes that begins after
	// that. due is set from a wake until the read it asked for begins;
	// announced are the changes heard of meanwhile, covered those heard
	// of before the running read began (reading is set while one runs);
	// skipped notes a wake left to such a read. Ids do not tell: a
	// change's id is taken before its commit, not in commit order.
	announced, covered    map[int64]bool
	due, reading, skipped bool
	// hinted are the hostnames this node's writes changed since the last
	// read began: the next reads their rows with the changes (hint).
	hinted   map[string]bool
	gaps     map[int64]*gap
	loaded   bool
	progress chan struct{} // closed and replaced whenever last or gaps move
	err      error         // the last error reading the store, nil once it reads again
	// current is the moment this node is known to be current to: it had
	// applied every change its database held at that moment. pending are
	// the changes its database held beyond what it had applied, at the
	// last read.
	current time.Time
	pending int64
	waiting int // WaitApplied callers
}

// gap is a change id seen skipped: its transaction may still commit.
type gap struct {
	since time.Time
	reads int // successful reads that did not find it
}

// A gap is given up (its transaction rolled back) only after gapTTL AND
// gapReads successful reads without it: time alone would drop a change that
// commits late while the database was unreachable.
const gapReads = 10

const (
	gapTTL      = 30 * time.Second
	batchSize   = 1000
	gapLookback = 256
)

// NewFeed makes a feed for consumer; poll is the catch-up interval.
func NewFeed(s *Store, consumer Consumer, poll time.Duration, log *slog.Logger) *Feed {
	f := &Feed{
		store: s, consumer: consumer, poll: poll, log: log,
		wake:     make(chan struct{}, 1),
		gaps:     map[int64]*gap{},
		progress: make(chan struct{}),
	}
	s.OnCommit(f.WakeFor)
	s.mu.Lock()
	s.feed = f
	s.mu.Unlock()
	return f
}

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

// Run loads the snapshot (retrying until the store answers) and then tails
// until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	// Listening before the snapshot: a change committed after it is
	// announced to us; one committed before is in it. A standby takes no
	// LISTEN (and hears no NOTIFY): a read-only node polls.
	if f.store.dialect == Postgres && !f.store.readOnly {
		stop := f.listen()
		defer stop()
	}
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		err := f.load(ctx)
		if err == nil {
			break
		}
		f.setErr(err)
		if recoveryConflict(err) {
			f.log.Warn("a replication conflict on the standby cancelled loading the index; retrying "+
				"(hot_standby_feedback and max_standby_streaming_delay on the standby avoid this)", "err", err)
		} else {
			f.log.Error("loading the index failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
	tick := time.NewTicker(f.poll)
	defer tick.Stop()
	var retry time.Duration
	for {
		// A failed read is tried again soon, not at the next poll or
		// wake: a write waiting to be served here (WaitApplied) is
		// answered when its wait runs out, served or not. While one
		// waits, its commit has just shown the database answers: no
		// backing off then.
		var again <-chan time.Time
		if err := f.catchUp(ctx); err != nil {
			retry = min(max(2*retry, retryFirst), f.poll, retryMost)
			if f.waiters() > 0 {
				retry = retryFirst
			}
			again = time.After(retry)
		} else {
			retry = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-tick.C:
		case <-again:
		}
	}
}

// A failed read of the changes is tried again after retryFirst, then
// twice as long each time, up to retryMost (or the poll, if shorter);
// after retryFirst each time while a write waits to be served.
const (
	retryFirst = 20 * time.Millisecond
	retryMost  = time.Second
)

func (f *Feed) load(ctx context.Context) error {
	q := f.store.Reader()
	last, at, err := f.position(ctx, q)
	if err != nil {
		return err
	}
	// Ids at or below it are gone, not late: they are no gaps.
	through, err := q.CompactedThrough(ctx)
	if err != nil {
		return err
	}
	// Transactions still open at this moment may hold ids below last: look
	// back for ids not yet visible and treat them as gaps.
	recent, err := q.ChangesAfter(ctx, max(0, last-gapLookback), nil, gapLookback)
	if err != nil {
		return err
	}
	if err := f.consumer.Load(ctx, q); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[int64]bool{}
	for _, c := range recent {
		seen[c.ID] = true
	}
	now := time.Now()
	clear(f.gaps)
	for id := max(1, last-gapLookback+1, through+1); id <= last; id++ {
		if !seen[id] {
			f.gaps[id] = &gap{since: now}
		}
	}
	f.last, f.loaded, f.err = last, true, nil
	f.current, f.pending = at, 0
	f.advance()
	return nil
}

// position is the newest change id of the store and the moment the store
// is known to be current to: the writers' heartbeat on a read-only node
// (its database may be a standby behind the primary), the moment of the
// read on a writer (whose database is the primary).
func (f *Feed) position(ctx context.Context, q Queries) (last int64, at time.Time, err error) {
	at = time.Now()
	if !f.store.readOnly {
		last, err = q.LastChange(ctx)
		return last, at, err
	}
	last, beat, err := q.Position(ctx)
	if t := time.UnixMilli(beat); beat > 0 && t.Before(at) {
		at = t
	}
	return last, at, err
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

// catchUp applies batches until nothing new is left, or a read fails.
func (f *Feed) catchUp(ctx context.Context) error {
	for ctx.Err() == nil {
		n, err := f.step(ctx)
		f.mu.Lock()
		if f.reading = false; err != nil && f.skipped {
			f.Wake() // the read a wake was left to failed: as if not left
		}
		f.skipped = false
		f.mu.Unlock()
		f.setErr(err)
		if err != nil {
			if ctx.Err() == nil {
				f.log.Warn("change feed: reading changes failed", "err", err)
			}
			return err
		}
		if n < batchSize {
			return nil
		}
	}
	return ctx.Err()
}

func (f *Feed) step(ctx context.Context) (int, error) {
	f.mu.Lock()
	f.due, f.reading, f.covered, f.announced = false, true, f.announced, nil
	last := f.last
	gaps := make([]int64, 0, len(f.gaps))
	for id := range f.gaps {
		gaps = append(gaps, id)
	}
	hinted := slices.Collect(maps.Keys(f.hinted))
	f.hinted = nil
	f.mu.Unlock()

	q := f.store.Reader()
	var (
		newest int64
		at     = time.Now()
		err    error
	)
	if f.store.readOnly {
		if newest, at, err = f.position(ctx, q); err != nil {
			return 0, err
		}
	}
	cs, q, err := q.ChangesServed(ctx, last, gaps, batchSize, hinted)
	if err != nil {
		return 0, err
	}
	if behind, err := f.behind(ctx, q, last, cs); err != nil || behind {
		return 0, err
	}
	if len(cs) > 0 {
		if err := f.consumer.Apply(ctx, q, cs); err != nil {
			return 0, err
		}
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	found := map[int64]bool{}
	for _, c := range cs {
		found[c.ID] = true
		delete(f.gaps, c.ID)
		if c.ID > f.last {
			for id := max(f.last+1, c.ID-gapLookback); id < c.ID; id++ {
				f.gaps[id] = &gap{since: now}
			}
			f.last = c.ID
		}
	}
	if len(cs) < batchSize {
		f.current = at
	}
	f.pending = max(0, newest-f.last)
	if !f.store.readOnly && len(cs) == batchSize {
		f.pending = batchSize // at least: a writer does not count them
	}
	moved := len(cs) > 0
	for _, id := range gaps {
		g := f.gaps[id]
		if found[id] || g == nil {
			continue
		}
		if g.reads++; g.reads >= gapReads && now.Sub(g.since) > gapTTL {
			delete(f.gaps, id) // rolled back: it will never show up
			moved = true
		}
	}
	if moved {
		f.advance()
	}
	return len(cs), nil
}

// behind reports whether changes after last were compacted away before
// this node read them, and if so loads a full snapshot again. Only a jump
// in the ids read (also left by a rolled-back transaction) costs the look
// at changes_compacted, which is read after cs: a compaction that deleted
// rows before cs was read has recorded it by then.
func (f *Feed) behind(ctx context.Context, q Queries, last int64, cs []Change) (bool, error) {
	i, _ := slices.BinarySearchFunc(cs, last+1, func(c Change, id int64) int { return cmp.Compare(c.ID, id) })
	if i == len(cs) || cs[i].ID == last+1 {
		return false, nil
	}
	through, err := q.CompactedThrough(ctx)
	if err != nil || through <= last {
		return false, err
	}
	f.log.Warn("change feed: this node fell behind the kept changes; loading a full snapshot",
		"applied", last, "compacted_through", through)
	if f.Reloaded != nil {
		f.Reloaded()
	}
	if err := f.load(ctx); err != nil {
		return true, err
	}
	f.Wake() // what was written during the load
	return true, nil
}

// recoveryConflict reports a read a hot standby cancelled to replay the
// primary's changes; the same read again usually succeeds.
func recoveryConflict(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "40001" && strings.Contains(pqErr.Message, "conflict with recovery")
}

// advance wakes WaitApplied callers; f.mu must be held.
func (f *Feed) advance() {
	close(f.progress)
	f.progress = make(chan struct{})
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

func (f *Feed) waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}

func (f *Feed) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
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
