package storage

import (
	"context"
	"errors"
	"log/slog"
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

// recoveryConflict reports a read a hot standby cancelled to replay the
// primary's changes; the same read again usually succeeds.
func recoveryConflict(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "40001" && strings.Contains(pqErr.Message, "conflict with recovery")
}

func (f *Feed) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}
