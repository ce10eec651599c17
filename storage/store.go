// Package storage holds Hostmint's state: the bun models, the versioned
// migrations, the queries, and the change feed that tells every node what
// changed. One implementation serves two dialects, SQLite (the embedded
// default, one node) and PostgreSQL (several nodes on one database).
//
// storage knows rows and transactions; it knows nothing of HTTP, DNS or the
// rules that decide what a write may do.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Dialect names a supported database.
type Dialect string

// The dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is an open database with the schema migrated.
type Store struct {
	db      *bun.DB
	dialect Dialect
	dsn     string

	mu       sync.Mutex
	onCommit []func(last int64) // wakes in-process feeds after a write
	feed     *Feed              // this node's feed, if one runs

	notify *notifier // PostgreSQL: tells other nodes about commits
	gate   writeGate // SQLite: writers wait their turn here
	groups groups    // WriteGrouped's batches by key

	counters statementCounter // CountStatements' (statements.go)

	readOnly bool // OpenReadOnly's: every write is refused
}

// Open opens (and for SQLite creates) the database and migrates its schema.
// For SQLite, dsn is a file path; for PostgreSQL, a lib/pq connection string.
func Open(ctx context.Context, d Dialect, dsn string) (*Store, error) {
	return open(ctx, d, dsn, false)
}

// OpenReadOnly opens a database only to read it, as a DNS-only node reads
// a hot standby: it checks that the schema is this build's instead of
// migrating, announces nothing, and refuses every write (ErrReadOnly).
func OpenReadOnly(ctx context.Context, d Dialect, dsn string) (*Store, error) {
	if d == SQLite {
		if _, err := os.Stat(dsn); err != nil {
			return nil, fmt.Errorf("storage: a read-only node reads an existing database: %w", err)
		}
	}
	return open(ctx, d, dsn, true)
}

func open(ctx context.Context, d Dialect, dsn string, readOnly bool) (*Store, error) {
	var (
		db    *bun.DB
		prep  *preparing
		stall = new(atomic.Int64)
	)
	switch d {
	case SQLite:
		if err := privateFiles(dsn); err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		sqldb, err := sql.Open("sqlite", sqliteDSN(dsn))
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		// One writer at a time is SQLite's model (the gate queues them);
		// readers run beside it (WAL).
		sqldb.SetMaxOpenConns(8)
		db = bun.NewDB(sqldb, sqlitedialect.New())
	case Postgres:
		conn, err := pq.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		conn.Dialer(stallDialer{timeout: stall})
		prep = &preparing{Connector: conn}
		sqldb := sql.OpenDB(prep)
		// Every connection may stay open: one closed after a burst is a
		// new PostgreSQL backend (a fork, authentication, cold caches) for
		// the next, which cost more CPU than the statements it served.
		sqldb.SetMaxOpenConns(maxConns)
		sqldb.SetMaxIdleConns(maxConns)
		sqldb.SetConnMaxIdleTime(5 * time.Minute)
		db = bun.NewDB(sqldb, pgdialect.New())
	default:
		return nil, fmt.Errorf("storage: unknown dialect %q (want sqlite or postgres)", d)
	}
	s := &Store{db: db, dialect: d, dsn: dsn, readOnly: readOnly}
	s.counters.beginSent = d != Postgres
	db.AddQueryHook(&s.counters)
	if d == SQLite {
		s.gate = make(writeGate, 1)
	}
	check := s.migrate
	if readOnly {
		check = s.checkSchema
	}
	if err := check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: %w", mapErr(err))
	}
	if d == Postgres {
		stall.Store(int64(stallTimeout))
		// From now on every connection prepares the hot statements (see
		// prepared.go); those opened for the migrations close, as they
		// have not.
		text := prepareAll(db)
		prep.text.Store(&text)
		db.DB.SetMaxIdleConns(0)
		db.DB.SetMaxIdleConns(maxConns)
		if !readOnly {
			s.notify = newNotifier(s)
		}
	}
	return s, nil
}

// privateFiles makes the SQLite file at path, its directory (0700, when
// it is made now) and the file itself (0600, whenever) private: the store
// holds key hashes and sealed keys. SQLite gives the -wal and -shm files
// it makes the database file's mode.
func privateFiles(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// maxConns bounds a PostgreSQL store's connections.
const maxConns = 32

// sqliteDSN turns a path into the driver's URI: WAL so readers never wait on
// the writer, immediate transactions so two writers never deadlock on a
// lock upgrade, a busy timeout instead of SQLITE_BUSY, and full sync so an
// acknowledged write survives a crash.
func sqliteDSN(path string) string {
	q := url.Values{}
	// busy_timeout first: switching a new file to WAL takes a lock that
	// another process opening it at the same moment must wait for.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Dialect is the database in use.
func (s *Store) Dialect() Dialect { return s.dialect }

// ReadOnly reports whether the store was opened by OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// DSN is the connection string the store was opened with.
func (s *Store) DSN() string { return s.dsn }

// Close closes the connection pool.
func (s *Store) Close() error {
	if s.notify != nil {
		s.notify.close()
	}
	return s.db.Close()
}

// Ping checks that the database answers. It runs a statement rather than
// PingContext: database/sql retries a statement on another connection when
// the pooled one it took turns out dead (closed by the server while idle: a
// restart, pg_terminate_backend, an idle timeout), but hands a failed ping
// back as is, which would report a database that answers as down.
// It answers by ctx's deadline even when the database has gone silent.
func (s *Store) Ping(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := s.db.DB.ExecContext(ctx, "SELECT 1")
		done <- err
	}()
	select {
	case err := <-done:
		return mapErr(err)
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
}

// Reader is the read side, used outside any transaction.
func (s *Store) Reader() Queries { return Queries{db: s.db, dialect: s.dialect} }

// OnCommit registers f to run after every committed write of this
// process, given the write's last change id.
func (s *Store) OnCommit(f func(last int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCommit = append(s.onCommit, f)
}

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
	pg         *pgConn         // its connection on PostgreSQL (pgconn.go), else nil
	memo       memo            // see remember
	// A batch's parts on PostgreSQL read accounts without their lock, and
	// keep their new hostnames for the last statement (unlocked.go).
	batch bool
	kept  []laterWrite   // the hostnames the batch's parts put off
	caps  map[string]int // the least cap each account's creates were allowed under
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
	conn := &connOf{}
	err := s.db.RunInTx(context.WithValue(ctx, connOf{}, conn), nil, func(ctx context.Context, btx bun.Tx) error {
		t = &Tx{tx: btx, pg: conn.c}
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

// Errors the store returns; everything else is unexpected.
var (
	ErrNotFound    = errors.New("storage: not found")
	ErrConflict    = errors.New("storage: conflict with an existing row")
	ErrUnavailable = errors.New("storage: database unavailable")
	// ErrReadOnly is every write's answer on a store opened read-only.
	ErrReadOnly = errors.New("storage: this node only reads the database")
)

// mapErr turns driver errors into the store's errors, keeping the cause.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict), errors.Is(err, ErrUnavailable), errors.Is(err, ErrReadOnly),
		errors.Is(err, ErrSeenMAC):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case isUnique(err) && isSeenMAC(err):
		return fmt.Errorf("%w: %v", ErrSeenMAC, err)
	case isUnique(err):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	case isUnavailable(err):
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

func isUnique(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// isUnavailable reports errors that say the database cannot be reached or
// has gone away, as opposed to errors in what was asked of it.
func isUnavailable(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		c := string(pqErr.Code)
		return strings.HasPrefix(c, "08") || c == "57P01" || c == "57P02" || c == "57P03" || c == "53300"
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "broken pipe", "connection reset", "bad connection",
		"driver: bad connection", "EOF", "no such host", "i/o timeout", "database is locked", "SQLITE_BUSY"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
