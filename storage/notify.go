package storage

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// notifier announces committed changes on NotifyChannel from outside the
// writing transactions. A NOTIFY inside a transaction takes a database-wide
// lock that is held until its commit is flushed, so every writer of every
// node would commit one after another; sent afterwards, by one goroutine per
// process, it costs each write nothing and any number of commits that land
// while one NOTIFY is in flight share the next. The payload is the newest
// change id; listeners read everything after what they have anyway, and
// the feed's poll covers a notification lost to a crash or an outage.
type notifier struct {
	s      *Store
	latest atomic.Int64
	wake   chan struct{}
	stop   chan struct{}
	done   sync.WaitGroup
	closed sync.Once
}

func newNotifier(s *Store) *notifier {
	n := &notifier{s: s, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	n.done.Add(1)
	go n.run()
	return n
}

// post records that change id has committed.
func (n *notifier) post(id int64) {
	for {
		cur := n.latest.Load()
		if id <= cur || n.latest.CompareAndSwap(cur, id) {
			break
		}
	}
	select {
	case n.wake <- struct{}{}:
	default: // a NOTIFY is already due; it will carry id or later
	}
}

func (n *notifier) run() {
	defer n.done.Done()
	for {
		select {
		case <-n.stop:
			return
		case <-n.wake:
		}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), uncounted{}, true), 5*time.Second)
		_, err := n.s.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", NotifyChannel, strconv.FormatInt(n.latest.Load(), 10))
		cancel()
		if err != nil {
			slog.Warn("change feed: NOTIFY failed; other nodes see the change at their next poll", "err", err)
		}
	}
}

func (n *notifier) close() {
	n.closed.Do(func() { close(n.stop) })
	n.done.Wait()
}
