package storage

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// The feed's reads: a snapshot to begin with (load), then the changes
// after the newest one applied, batch by batch (step), asking again for
// the ids skipped over (gaps), and loading again when the changes it
// needs were compacted away (behind).

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
