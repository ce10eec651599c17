package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lib/pq"
)

// writeGate queues SQLite writers in the process. SQLite takes one writer
// at a time; left to itself, each waiting writer polls the file lock with
// sleeps (busy_timeout), which under many writers wastes the lock's free
// moments and ends some of them with SQLITE_BUSY. Waiting here instead is
// first come, first served, and costs a waiter nothing. PostgreSQL has row
// locks and no gate (nil).
type writeGate chan struct{}

// enter waits for the gate, or for ctx to end, and returns its release.
func (g writeGate) enter(ctx context.Context) (func(), error) {
	if g == nil {
		return func() {}, nil
	}
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the writer: %v", ErrUnavailable, ctx.Err())
	}
}

// Transactions that fail only because of another one running beside them
// are run again, a few times, after a short random pause: PostgreSQL's
// deadlocks and serialisation failures, and SQLite's busy lock when another
// process (a backup, the CLI) holds it past the busy timeout. None of these
// means the store is down, so none should reach a caller.
const (
	retries    = 8
	firstPause = time.Millisecond
	lastPause  = 100 * time.Millisecond
)

// retryable reports an error that running the transaction again may cure.
func retryable(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "40001" || pqErr.Code == "40P01"
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// pause waits before attempt n+1 (jittered, doubling), or until ctx ends.
func pause(ctx context.Context, n int) error {
	d := min(firstPause<<n, lastPause)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
