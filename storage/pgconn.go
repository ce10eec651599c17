package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
)

// A grouped write's savepoint (group.go) costs PostgreSQL nothing to run
// but a round trip to send: on two cores under load, 0.1-0.2 ms of a
// create part's 0.8, all of them spent in turn while the account's other
// writes wait. So it travels with the part's first statement instead, in
// the same simple query ("SAVEPOINT part3; EXECUTE …"): PostgreSQL runs
// the two in order inside the transaction, and if the savepoint fails the
// statement after it does not run and the part's error says so, as if
// each had been sent alone.
//
// So do the part's own inserts, which the next part must see (a cap
// counts them): they go with the next part's savepoint and first
// statement, or with the batch's flush. An insert that fails there fails
// that statement, and the next part's savepoint is then missing, so its
// rollback fails and the batch is rolled back and each write runs alone
// (group.go): never answered for a part whose insert did not happen.
//
// pgConn is a lib/pq connection that holds such statements back. A
// statement sent with withNext's mark is kept, not sent, and goes in
// front of the next statement sent on the same connection, or before
// COMMIT; a rollback drops it.

// withNextComment, as a bun query's comment, marks it to go with the next
// statement on its connection (on PostgreSQL; elsewhere it is a comment
// and the statement runs at once).
const withNextComment = "hostmint: with the next statement"

// withNextMark is how the mark starts a statement.
const withNextMark = "/* " + withNextComment + " */ "

// withNext is stmt marked to go with the next statement.
func withNext(stmt string) string { return withNextMark + stmt }

// withNextCtx is ctx for a statement marked withNext: on PostgreSQL it is
// no round trip, so CountStatements leaves it out.
func (t *Tx) withNextCtx(ctx context.Context) context.Context {
	if t.dialect != Postgres {
		return ctx
	}
	return context.WithValue(ctx, uncounted{}, true)
}

// pqConn is what lib/pq's connection is; a driver that is not all of it
// is left as it is (marked statements then run at once).
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type pgConn struct {
	pqConn
	kept      string // statements to send before the next one, each ending "; "
	beginKept bool   // kept starts with the transaction's BEGIN
	sent      uint64 // statements sent or kept so far (see Tx.remember)
}

// connOf, in the context a transaction begins with, learns its connection.
type connOf struct{ c *pgConn }

// begin starts a read-write transaction with the server's isolation level.
const begin = "BEGIN READ WRITE; "

func wrapPQ(c driver.Conn) driver.Conn {
	if pc, ok := c.(pqConn); ok {
		return &pgConn{pqConn: pc}
	}
	return c
}

// with is q with the kept statements in front of it, or, when q has
// arguments (the extended protocol takes one statement), q after they
// were sent alone.
func (c *pgConn) with(ctx context.Context, q string, args []driver.NamedValue) (string, error) {
	if len(args) > 0 || c.kept == "" {
		return q, c.sendKept(ctx)
	}
	q, c.kept, c.beginKept = c.kept+q, "", false
	return q, nil
}

// sendKept sends the kept statements alone, if any.
func (c *pgConn) sendKept(ctx context.Context) error {
	if c.kept == "" {
		return nil
	}
	kept := c.kept
	c.kept, c.beginKept = "", false
	_, err := c.pqConn.ExecContext(ctx, kept, nil)
	return err
}

func (c *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.sent++
	if len(args) == 0 && strings.HasPrefix(q, withNextMark) {
		c.kept += strings.TrimPrefix(q, withNextMark) + "; "
		return driver.RowsAffected(0), nil
	}
	q, err := c.with(ctx, q, args)
	if err != nil {
		return nil, err
	}
	return c.pqConn.ExecContext(ctx, q, args)
}

func (c *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.sent++
	q, err := c.with(ctx, q, args)
	if err != nil {
		return nil, err
	}
	return c.pqConn.QueryContext(ctx, q, args)
}

func (c *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.sent++
	if err := c.sendKept(ctx); err != nil {
		return nil, err
	}
	return c.pqConn.PrepareContext(ctx, q)
}

// BeginTx keeps a read-write transaction's BEGIN too: it goes with the
// transaction's first statement, a round trip less for every write. (lib/pq
// learns that the transaction began from the server's answer to it, as it
// does for its own BEGIN.) A transaction with other options, or on a
// connection that is not lib/pq's, begins at once.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.kept, c.beginKept = "", false
	if o, _ := ctx.Value(connOf{}).(*connOf); o != nil {
		o.c = c
	}
	if tx, ok := c.pqConn.(driver.Tx); ok && opts.Isolation == driver.IsolationLevel(sql.LevelDefault) && !opts.ReadOnly {
		c.kept, c.beginKept = begin, true
		return pgTx{c: c, Tx: tx}, nil
	}
	tx, err := c.pqConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return pgTx{c: c, Tx: tx}, nil
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	c.kept, c.beginKept = "", false
	return c.pqConn.ResetSession(ctx)
}

// pgTx sends what its connection kept before it commits, and drops it
// when it rolls back. A transaction whose BEGIN was never sent has nothing
// on the server to end.
type pgTx struct {
	c *pgConn
	driver.Tx
}

func (t pgTx) Commit() error {
	if t.c.kept == begin {
		t.c.kept, t.c.beginKept = "", false
		return nil
	}
	if err := t.c.sendKept(context.Background()); err != nil {
		t.Tx.Rollback()
		return err
	}
	return t.Tx.Commit()
}

func (t pgTx) Rollback() error {
	began := !t.c.beginKept
	t.c.kept, t.c.beginKept = "", false
	if !began {
		return nil
	}
	return t.Tx.Rollback()
}
