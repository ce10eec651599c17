package storage

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
)

// A write is one transaction (Tx), tried again while the database asks,
// and told once committed: to this node's feed, to the other nodes
// (NOTIFY), and to a caller that waits until it is served here
// (WriteVisible). WriteAll makes several rule calls one such write.

// Tx is a write transaction.
type Tx struct {
	Queries
	tx         bun.Tx
	last       int64
	later      []laterWrite    // rows to write when fn is done (InsertLater, UpdateHostnameLater)
	charges    []charge        // token buckets to charge when fn is done (ChargeLater)
	partAudits []partAudit     // the audit entries of a batch's parts (WriteGrouped)
	changes    []Change        // appended to the feed when fn is done
	changed    map[string]bool // kind\x00ref already in changes
	flushed    int             // changes already written
	auditDone  bool            // the audit entry is written (or none is due)
	created    string          // the first object inserted, "<kind>:<id>", for the audit entry
	touched    string          // the first object changed, likewise
	noAudit    bool            // see NoAudit
	audited    []int64         // the audit rows this transaction wrote
	joined     bool            // WriteAll's: its parts are several rule calls
	pg         *pgwire.Conn    // its connection on PostgreSQL, else nil
	memo       memo            // see remember
	// A batch's parts on PostgreSQL keep their new hostnames for the last
	// statement (batch_accounts.go).
	batch bool
	kept  []laterWrite // the hostnames the batch's parts put off
	// The first reads the batch made for its parts (prefetch.go).
	prefetched map[string]prefetched
}

// NotifyChannel is the PostgreSQL channel on which writes announce changes.
const NotifyChannel = "hostmint_changes"

// Changed notes a row for the change feed for kind/ref, once per
// transaction and object. The rows are written when the transaction's work
// is done, together with its audit entry (see flush).
func (t *Tx) Changed(_ context.Context, kind, ref string) error {
	if t.touched == "" { // even if already noted: a batch's later part names its own object
		t.touched = kind + ":" + ref
	}
	key := kind + "\x00" + ref
	if t.changed[key] {
		return nil
	}
	if t.changed == nil {
		t.changed = map[string]bool{}
	}
	t.changed[key] = true
	t.changes = append(t.changes, Change{Kind: kind, Ref: ref, CreatedAt: time.Now().UnixMilli()})
	return nil
}

// Write runs fn in one transaction and commits it if fn returns nil. It
// returns the id of the last change row the transaction appended (0 if none),
// so the caller can wait until its node serves the change.
func (s *Store) Write(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (int64, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if t, _ := ctx.Value(joinKey{}).(*Tx); t != nil {
		// Inside WriteAll: one more part of its transaction, which commits
		// (and tells the feed) once every part is done. The rows the parts
		// before it put off are written first, so that it sees them (a
		// cap counts them) as it would after their own commits.
		if err := t.insertLater(ctx); err != nil {
			return 0, err
		}
		return 0, mapErr(fn(ctx, t))
	}
	release, err := s.gate.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var t *Tx
	for n := 0; ; n++ {
		t, err = s.runTx(ctx, fn)
		if err == nil || n == retries-1 || !retryable(err) || pause(ctx, n) != nil {
			break
		}
	}
	if err != nil {
		return 0, mapErr(err)
	}
	if e, _ := ctx.Value(auditKey{}).(*AuditEntry); e != nil && len(t.audited) > 0 {
		e.ids = append(e.ids, t.audited...)
	}
	if t.last > 0 {
		s.mu.Lock()
		fs, feed := s.onCommit, s.feed
		s.mu.Unlock()
		if feed != nil && s.dialect == Postgres { // before anything asks it for the changes
			feed.hint(t.changes) // (SQLite has no round trip to save: ChangesServed)
		}
		if s.notify != nil {
			s.notify.post(t.last)
		}
		for _, f := range fs {
			f(t.last)
		}
	}
	return t.last, nil
}

// runTx is one attempt at fn's transaction.
func (s *Store) runTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (*Tx, error) {
	var t *Tx
	ctx, begun := pgwire.Learn(ctx)
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
		t = &Tx{tx: btx, pg: begun.Conn}
		t.Queries = Queries{db: btx, dialect: s.dialect, tx: t}
		if err := fn(ctx, t); err != nil {
			return err
		}
		return t.flush(ctx, true)
	})
	return t, err
}

// visibleWait bounds how long WriteVisible waits for this node's feed.
const visibleWait = 2 * time.Second

// WriteVisible runs fn like Write, then waits (up to visibleWait) until this
// node's feed has applied the change, so that what the caller reads next,
// DNS answers included, reflects it. A late feed is logged, not an error:
// the write is committed.
func (s *Store) WriteVisible(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	if ctx.Value(joinKey{}) != nil {
		_, err := s.Write(ctx, fn) // WriteAll waits once for all of it
		return err
	}
	id, err := s.Write(ctx, fn)
	if err != nil || id == 0 {
		return err
	}
	s.waitApplied(ctx, id)
	return nil
}

// waitApplied waits (up to visibleWait) until this node's feed has applied
// change id. A late feed is logged, not an error: the write is committed.
func (s *Store) waitApplied(ctx context.Context, id int64) {
	s.mu.Lock()
	f := s.feed
	s.mu.Unlock()
	if f == nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, visibleWait)
	defer cancel()
	if err := f.WaitApplied(wctx, id); err != nil {
		f.log.Warn("change not applied on this node in time", "change", id, "err", err)
	}
}

type joinKey struct{}

// WriteAll runs fn so that every write it makes through this store (Write,
// WriteVisible, however deep in the rules) is part of one transaction:
// committed together if fn returns nil, none of it otherwise. A door that
// stands for several rule calls at once (a DNS UPDATE message) is all or
// nothing this way, without a copy of the rules. Like WriteVisible, it
// waits until this node's feed has applied the changes.
// fn reads through tx, so that what it checks is what the parts change.
func (s *Store) WriteAll(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	return s.WriteVisible(ctx, func(ctx context.Context, tx *Tx) error {
		tx.joined = true
		return fn(context.WithValue(ctx, joinKey{}, tx), tx)
	})
}
