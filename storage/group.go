package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. Writes that must take turns on one row (the creates of one
// account, on the account's lock and its rate limits) commit at the speed
// of the database's fsync, one after the other, however many callers wait.
// WriteGrouped lets them share the commit instead: while one transaction
// of a key runs, the writes of that key that arrive wait and then run
// together, each in a savepoint of one transaction, so that a batch of N
// costs one commit, not N. Each write keeps its own answer: one that fails
// is rolled back to its savepoint and changes nothing; the others commit.
// If the batch's transaction cannot commit (a constraint only the commit
// checks, a rate limit the batch overdraws together), each of its writes
// runs again alone, as Write would have run it.

// batchTimeout bounds a batch's transaction, which no one caller's
// deadline does (a caller that leaves stops waiting for it).
const batchTimeout = 30 * time.Second

// maxGroup bounds a batch: PostgreSQL keeps 64 subtransactions per
// transaction in memory, past which readers on standbys slow down.
const maxGroup = 32

type groups struct {
	mu      sync.Mutex
	keys    map[string]*groupKey
	batches atomic.Int64 // committed with more than one write (tests)
}

// groupKey is one key's writes waiting for the transaction after the one
// running (running is false when none runs).
type groupKey struct {
	running bool
	waiting []*groupPart
}

type groupPart struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *Tx) error
	done chan groupResult
	err  error   // the part's own error in the batch's transaction
	rows []int64 // its audit rows, once committed
}

type groupResult struct {
	last  int64
	err   error
	alone bool // the batch failed as a whole: run the write alone
}

// errBatchFailed rolls back a batch none of whose writes succeeded.
var errBatchFailed = errors.New("storage: every write of the batch failed")

// WriteGrouped is Write for writes that take turns on one row, named by
// key: they are committed in batches (see above). Inside WriteAll it is
// that transaction's part, as Write is.
func (s *Store) WriteGrouped(ctx context.Context, key string, fn func(ctx context.Context, tx *Tx) error) (int64, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if ctx.Value(joinKey{}) != nil {
		return s.Write(ctx, fn)
	}
	p := &groupPart{ctx: ctx, fn: fn, done: make(chan groupResult, 1)}
	s.groups.mu.Lock()
	if s.groups.keys == nil {
		s.groups.keys = map[string]*groupKey{}
	}
	k := s.groups.keys[key]
	if k == nil {
		k = &groupKey{}
		s.groups.keys[key] = k
	}
	k.waiting = append(k.waiting, p)
	if !k.running {
		k.running = true
		go s.drain(key, k)
	}
	s.groups.mu.Unlock()
	var r groupResult
	select {
	case r = <-p.done:
	case <-ctx.Done():
		// Its batch may still commit it; the caller has gone either way.
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
	if r.alone {
		return s.Write(ctx, fn)
	}
	return r.last, r.err
}

// WriteGroupedVisible is WriteGrouped that waits, as WriteVisible does,
// until this node's feed has applied the change.
func (s *Store) WriteGroupedVisible(ctx context.Context, key string, fn func(ctx context.Context, tx *Tx) error) error {
	if ctx.Value(joinKey{}) != nil {
		_, err := s.Write(ctx, fn)
		return err
	}
	id, err := s.WriteGrouped(ctx, key, fn)
	if err != nil || id == 0 {
		return err
	}
	s.waitApplied(ctx, id)
	return nil
}

// WriteAllGrouped is WriteAll whose transactions of one key are committed
// in batches, as WriteGrouped's writes are: a DNS UPDATE message is all or
// nothing, and shares its commit with the other writes of its account.
func (s *Store) WriteAllGrouped(ctx context.Context, key string, fn func(ctx context.Context, tx *Tx) error) error {
	return s.WriteGroupedVisible(ctx, key, func(ctx context.Context, tx *Tx) error {
		joined := tx.joined
		tx.joined = true
		defer func() { tx.joined = joined }()
		return fn(context.WithValue(ctx, joinKey{}, tx), tx)
	})
}

// drain runs key's batches until none waits.
func (s *Store) drain(key string, k *groupKey) {
	for {
		s.groups.mu.Lock()
		batch := k.waiting[:min(len(k.waiting), maxGroup)]
		k.waiting = k.waiting[len(batch):]
		if len(batch) == 0 {
			k.running = false
			delete(s.groups.keys, key)
			s.groups.mu.Unlock()
			return
		}
		s.groups.mu.Unlock()
		s.runBatch(batch)
	}
}

// runBatch commits batch in one transaction and answers each part.
func (s *Store) runBatch(batch []*groupPart) {
	if len(batch) == 1 { // nothing to share: as Write would, meanwhile others gather
		p := batch[0]
		last, err := s.Write(p.ctx, p.fn)
		p.done <- groupResult{last: last, err: err}
		return
	}
	// No one caller's deadline ends the batch (each part's statements run
	// under its own, and a part whose caller left is skipped); batchTimeout
	// does.
	ctx, cancel := context.WithTimeout(WithoutAudit(context.WithoutCancel(batch[0].ctx)), batchTimeout)
	defer cancel()
	last, err := s.Write(ctx, func(ctx context.Context, t *Tx) error {
		ok := false
		for i, p := range batch {
			p.err, p.rows = nil, nil
			if err := p.ctx.Err(); err != nil {
				p.err = fmt.Errorf("%w: %v", ErrUnavailable, err)
				continue
			}
			p.err = t.part(ctx, p, i)
			ok = ok || p.err == nil
		}
		if !ok {
			return errBatchFailed
		}
		return nil
	})
	if err == nil {
		s.groups.batches.Add(1)
	}
	for _, p := range batch {
		switch {
		case errors.Is(err, errBatchFailed):
			p.done <- groupResult{err: p.err}
		case errors.Is(err, ErrUnavailable):
			// Perhaps lost with the commit's answer: running the writes
			// again could make them twice. Each caller hears it, as a
			// write alone would have.
			p.done <- groupResult{err: err}
		case err != nil:
			p.done <- groupResult{alone: true}
		case p.err != nil:
			p.done <- groupResult{err: p.err}
		default:
			if e, _ := p.ctx.Value(auditKey{}).(*AuditEntry); e != nil {
				e.ids = append(e.ids, p.rows...)
			}
			p.done <- groupResult{last: last}
		}
	}
}

// part runs p's write as the i-th part of t, in a savepoint: on error the
// database and t's own queues are as they were before it. Its audit entry
// (the one of p's context) is queued for t's flush, and the rows it put
// off are written before the next part, so that the next part sees them
// (a cap counts them) and a constraint they break fails this part only.
func (t *Tx) part(ctx context.Context, p *groupPart, i int) error {
	sp := fmt.Sprintf("part%d", i)
	if _, err := t.tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
		return mapErr(err)
	}
	changes, changed, charges := len(t.changes), maps.Clone(t.changed), slices.Clone(t.charges)
	t.created, t.touched, t.noAudit = "", "", false
	err := runPart(p, t)
	if err == nil {
		err = t.insertLater(p.ctx)
	}
	if err != nil {
		t.later = nil
		t.changes, t.changed, t.charges = t.changes[:changes], changed, charges
		if _, rerr := t.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
			return errors.Join(mapErr(err), mapErr(rerr))
		}
		return mapErr(err)
	}
	if row := t.auditRow(p.ctx); row != nil {
		t.partAudits = append(t.partAudits, partAudit{row: row, part: p})
	}
	return nil
}

// partAudit is a part's audit entry, queued for the batch's flush.
type partAudit struct {
	row  *AuditEntry
	part *groupPart
}

// runPart runs p's write on t. A panic in it fails that part, as net/http
// would fail its request, instead of the process that runs the batch.
func runPart(p *groupPart, t *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: a write of the batch panicked: %v", r)
		}
	}()
	return p.fn(p.ctx, t)
}
