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
	"sync"
	"time"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/hostmint/hostmint/storage/pipeline"
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
		db   *bun.DB
		prep *pgwire.Connector
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
		var err error
		if prep, err = pgwire.NewConnector(dsn); err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
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
	s.groups.pipe = pipeline.New(lanesOf(d), maxGroup, s.runBatch)
	check := s.migrate
	if readOnly {
		check = s.checkSchema
	}
	if err := check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: %w", mapErr(err))
	}
	if d == Postgres {
		// From now on reads give up on a silent server, and every
		// connection prepares the hot statements; those opened for the
		// migrations close, as they have not.
		prep.Ready(db)
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
