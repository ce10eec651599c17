package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/hostmint/hostmint/storage/pipeline"
)

// The write pipeline. Writes that take turns on rows (an account's
// creates, on its counter and its rate limits) would commit at the speed
// of the database's fsync, one after the other. WriteGrouped lets writes
// share the commit instead: while a lane's transaction runs, the writes
// that arrive for it wait, and then run together, each in a savepoint of
// one transaction, so that a batch of N costs one commit, not N. The lane
// is not the account: every account's writes ride one of a few lanes
// (lanesOf), an account's in one lane while it has any in flight, so that
// a service with many accounts batches as well as one busy account does.
// Each write keeps its own answer: one that fails is rolled back to its
// savepoint and changes nothing; the others commit. If the batch's
// transaction cannot commit (a constraint only the commit checks, a cap or
// a rate limit the batch passes together), each of its writes runs again
// alone, as Write would have run it: one account's refusal never fails
// another's write. The queueing is package pipeline's, which also states
// the contract a write may rely on; running a batch is this file's.

// batchTimeout bounds a batch's transaction, which no one caller's
// deadline does (a caller that leaves stops waiting for it).
const batchTimeout = 30 * time.Second

// maxGroup bounds a batch: PostgreSQL keeps 64 subtransactions per
// transaction in memory, past which readers on standbys slow down.
const maxGroup = 32

// groups is the store's pipeline and what its batches came to.
type groups struct {
	pipe    *pipeline.Pipeline[*groupPart, groupResult]
	batches atomic.Int64 // committed with more than one write
	parts   atomic.Int64 // writes committed in those
	alone   atomic.Int64 // writes run again alone after their batch failed
}

// groupPart is a write in the pipeline, and what it came to in its batch.
type groupPart struct {
	key  string          // whose writes take turns: an account's id, for most
	ctx  context.Context // the caller's
	fn   func(ctx context.Context, tx *Tx) error
	err  error   // the part's own error in the batch's transaction
	rows []int64 // its audit rows, once committed
}

type groupResult struct {
	last  int64
	err   error
	rows  []int64 // the audit rows that recorded it
	alone bool    // the batch failed as a whole: run the write alone
}

// errBatchFailed rolls back a batch none of whose writes succeeded.
var errBatchFailed = errors.New("storage: every write of the batch failed")

// WriteGrouped is Write through the write pipeline (see above): key names
// the writes that take turns (an account's), which keep their order. The
// answer is the one Write would have given (package pipeline's contract).
// Inside WriteAll it is that transaction's part, as Write is.
func (s *Store) WriteGrouped(ctx context.Context, key string, fn func(ctx context.Context, tx *Tx) error) (int64, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if ctx.Value(joinKey{}) != nil {
		return s.Write(ctx, fn)
	}
	if ctx.Value(aloneKey{}) != nil {
		return s.Write(ctx, alone(key, fn))
	}
	r, ok := s.groups.pipe.Do(ctx, key, &groupPart{key: key, ctx: ctx, fn: fn})
	if !ok { // never run: the caller is told at once
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
	if r.alone {
		s.groups.alone.Add(1)
		return s.Write(ctx, alone(key, fn))
	}
	if e, _ := ctx.Value(auditKey{}).(*AuditEntry); e != nil {
		e.ids = append(e.ids, r.rows...)
	}
	return r.last, r.err
}

// PipelineStats are WriteGrouped's counts since the store opened.
type PipelineStats struct {
	Batches int64 // batches of more than one write committed
	Parts   int64 // writes committed in them
	Alone   int64 // writes run again alone after their batch failed
}

// PipelineStats reads the pipeline's counts.
func (s *Store) PipelineStats() PipelineStats {
	g := &s.groups
	return PipelineStats{Batches: g.batches.Load(), Parts: g.parts.Load(), Alone: g.alone.Load()}
}

// alone is fn as a write of key alone: it locks its account first, as a
// batch locks its accounts (lockFirst).
func alone(key string, fn func(ctx context.Context, tx *Tx) error) func(ctx context.Context, tx *Tx) error {
	return func(ctx context.Context, tx *Tx) error {
		if err := tx.lockFirst(ctx, []string{key}); err != nil {
			return err
		}
		return fn(ctx, tx)
	}
}

type aloneKey struct{}

// Alone has the grouped writes under ctx run alone, each its own
// transaction, as Write runs them: what a batch's write must answer the
// same as (the pipeline's differential test), and a way to rule the
// pipeline out when a write misbehaves.
func Alone(ctx context.Context) context.Context {
	return context.WithValue(ctx, aloneKey{}, true)
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

// runBatch commits batch in one transaction and answers each part.
func (s *Store) runBatch(parts []*pipeline.Part[*groupPart, groupResult]) {
	batch := make([]*groupPart, len(parts))
	for i, p := range parts {
		batch[i] = p.Write
	}
	if len(batch) == 1 { // nothing to share: as Write would, meanwhile others gather
		p := batch[0]
		e, _ := p.ctx.Value(auditKey{}).(*AuditEntry)
		var before int
		if e != nil {
			before = len(e.ids)
		}
		last, err := s.Write(p.ctx, alone(p.key, func(ctx context.Context, t *Tx) error {
			return runPart(p, ctx, t)
		}))
		r := groupResult{last: last, err: err}
		if e != nil { // Write noted them on the entry; the caller does that
			r.rows, e.ids = e.ids[before:], e.ids[:before]
		}
		parts[0].Answer(r)
		return
	}
	// No one caller's deadline ends the batch: each part's statements run
	// under the batch's (batchTimeout), and a part whose caller left before
	// it began is skipped.
	ctx, cancel := context.WithTimeout(WithoutAudit(context.WithoutCancel(batch[0].ctx)), batchTimeout)
	defer cancel()
	last, err := s.Write(ctx, func(ctx context.Context, t *Tx) error {
		t.batch = t.dialect == Postgres // its parts keep their new hostnames for the last statement (batch_accounts.go)
		keys := make([]string, len(batch))
		for i, p := range batch {
			keys[i] = p.key
		}
		if err := t.lockFirst(ctx, keys); err != nil {
			return fmt.Errorf("%w: %v", errBatchBroken, err)
		}
		if t.batch {
			if err := t.prefetch(ctx, batch); err != nil { // nothing written yet: each runs alone
				return fmt.Errorf("%w: %v", errBatchBroken, err)
			}
		}
		ok := false
		for i, p := range batch {
			p.err, p.rows = nil, nil
			if err := p.ctx.Err(); err != nil {
				p.err = fmt.Errorf("%w: %v", ErrUnavailable, err)
				continue
			}
			var broken error
			if p.err, broken = t.part(ctx, p, i); broken != nil {
				// The transaction is not what the parts before left (a
				// savepoint gone with a statement the driver aborted):
				// nothing of it may commit.
				return fmt.Errorf("%w: %v", errBatchBroken, broken)
			}
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
	if theirs, rest := refusedFor(err, parts); len(theirs) > 0 && len(rest) > 0 {
		// One account's writes passed its limits together: they run alone,
		// where each meets its limit as it would have, and the rest again.
		for _, p := range theirs {
			p.Answer(groupResult{alone: true})
		}
		s.runBatch(rest)
		return
	}
	for i, p := range batch {
		answer := parts[i].Answer
		switch {
		case errors.Is(err, errBatchFailed) && retryable(p.err):
			answer(groupResult{alone: true}) // its savepoint is gone: again, alone
		case errors.Is(err, errBatchFailed):
			answer(groupResult{err: p.err})
		case errors.Is(err, errBatchBroken):
			answer(groupResult{alone: true}) // rolled back before any commit
		case errors.Is(err, ErrUnavailable):
			// Perhaps lost with the commit's answer: running the writes
			// again could make them twice. Each caller hears it, as a
			// write alone would have.
			answer(groupResult{err: err})
		case err != nil:
			answer(groupResult{alone: true})
		case p.err != nil && retryable(p.err):
			// A deadlock or serialisation failure rolled back to its
			// savepoint: Write would have run it again, so it runs alone.
			answer(groupResult{alone: true})
		case p.err != nil:
			answer(groupResult{err: p.err})
		default:
			s.groups.parts.Add(1)
			answer(groupResult{last: last, rows: p.rows})
		}
	}
}

// refusedFor splits a batch refused for one account's sake (err) into
// that account's writes and the rest; none, if it was not so refused.
func refusedFor(err error, parts []*pipeline.Part[*groupPart, groupResult]) (theirs, rest []*pipeline.Part[*groupPart, groupResult]) {
	var ar *accountRefusal
	if !errors.As(err, &ar) {
		return nil, nil
	}
	for _, p := range parts {
		if p.Write.key == ar.account {
			theirs = append(theirs, p)
		} else {
			rest = append(rest, p)
		}
	}
	return theirs, rest
}

// errBatchBroken rolls back a batch whose transaction a part left unusable.
var errBatchBroken = errors.New("storage: the batch's transaction broke")

// part runs p's write as the i-th part of t, in a savepoint: on error the
// database and t's own queues are as they were before it. Its audit entry
// (the one of p's context) is queued for t's flush, and the rows it put
// off are written before the next part, so that the next part sees them
// and a constraint they break fails this part only. On PostgreSQL its new
// hostnames wait for the batch's last statement instead (batch_accounts.go): the
// next part's read of the account counts them, and a label they take twice
// fails the batch, whose writes then run again alone.
// The part's statements run under ctx, the batch's context with the
// part's values: a caller that stops waiting must not have the driver
// abort a statement of the shared transaction. broken reports that the
// transaction itself failed (its savepoint could not be set or restored).
func (t *Tx) part(ctx context.Context, p *groupPart, i int) (err, broken error) {
	sp := fmt.Sprintf("part%d", i)
	// Sent with the part's first statement (storage/pgwire): a round trip less.
	if _, err := t.tx.ExecContext(t.withNextCtx(ctx), pgwire.WithNext("SAVEPOINT "+sp)); err != nil {
		return nil, err
	}
	pctx, cancel := context.WithDeadline(context.WithoutCancel(p.ctx), deadline(ctx))
	defer cancel()
	changes, changed, charges := len(t.changes), maps.Clone(t.changed), slices.Clone(t.charges)
	t.created, t.touched, t.noAudit = "", "", false
	var sent uint64
	if t.pg != nil {
		sent = t.pg.Sent()
	}
	err = runPart(p, pctx, t)
	if t.prefetched != nil && t.pg.Sent() != sent {
		t.prefetched = nil // it read or wrote for itself (prefetch.go)
	}
	if err == nil { // new hostnames wait for the last statement (batch_accounts.go), the rest is
		t.keepLater() // sent with the next part's first statement (storage/pgwire)
		t.settlePrefetched(t.later)
		err = t.writeLater(pctx, true)
	}
	if err != nil {
		t.later = nil
		t.changes, t.changed, t.charges = t.changes[:changes], changed, charges
		if _, rerr := t.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
			return mapErr(err), rerr
		}
		return mapErr(err), nil
	}
	if row := t.auditRow(pctx); row != nil {
		t.partAudits = append(t.partAudits, partAudit{row: row, part: p})
	}
	return nil, nil
}

// deadline is ctx's deadline (the batch always has one).
func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// partAudit is a part's audit entry, queued for the batch's flush.
type partAudit struct {
	row  *AuditEntry
	part *groupPart
}

// runPart runs p's write on t under ctx. A panic in it fails that write, as
// net/http would fail its request, not the process that runs the batches.
func runPart(p *groupPart, ctx context.Context, t *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: a write panicked: %v", r)
		}
	}()
	return p.fn(ctx, t)
}

// lanesOf is how many batches run at once on d. SQLite takes one writer at
// a time: one lane gathers the most writes a commit. On PostgreSQL a batch
// is a run of round trips on one connection, during which the server's
// other core would idle: a second lane, which writes reach only when the
// first's next batch is full, made 64 accounts' creates 15-35 % faster
// here (BenchmarkCreateAccounts, docs/performance.md). Bigger machines
// get a lane for every two cores.
func lanesOf(d Dialect) int {
	if d == SQLite {
		return 1
	}
	return max(2, runtime.GOMAXPROCS(0)/2)
}
