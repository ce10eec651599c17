package pgwire

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
)

// A grouped write's savepoint (storage/group.go) costs PostgreSQL nothing to run
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
// (storage/group.go): never answered for a part whose insert did not happen.
//
// Conn is a lib/pq connection that holds such statements back. A
// statement sent with WithNext's mark is kept, not sent, and goes in
// front of the next statement sent on the same connection, or before
// COMMIT; a rollback drops it.
//
// A write's last statement, its flush (storage/flush.go), carries the COMMIT the
// same way, in one simple query ("… SELECT …; COMMIT"): a round trip less
// for every write, and for every batch of grouped ones, which otherwise
// waits for it with its account's next batch behind. Nothing is left to
// decide after the flush (its rate limits are checked in it), so the
// commit does not wait for its answer. If the flush fails PostgreSQL skips
// the COMMIT and the transaction is rolled back as before; if the COMMIT
// itself fails (a constraint checked only then) the transaction is over
// and there is nothing to roll back. The command tag lib/pq read last
// tells the two apart.

// WithNextComment, as a bun query's comment, marks it to go with the next
// statement on its connection (on PostgreSQL; elsewhere it is a comment
// and the statement runs at once).
const WithNextComment = "hostmint: with the next statement"

// withNextMark is how the mark starts a statement.
const withNextMark = "/* " + WithNextComment + " */ "

// WithNext is stmt marked to go with the next statement.
func WithNext(stmt string) string { return withNextMark + stmt }

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

// Conn is a lib/pq connection that holds statements back (see above).
type Conn struct {
	pqConn
	kept      string     // statements to send before the next one, each ending "; "
	beginKept bool       // kept starts with the transaction's BEGIN
	sent      uint64     // statements sent or kept so far (see Tx.remember)
	sock      *stallConn // its socket, if known
	tx        *Begun
	// ending: a query carried the transaction's COMMIT (commitRows); over:
	// the COMMIT ran, so there is no transaction left to end; failed: what
	// the query or its COMMIT answered instead of success.
	ending, over bool
	failed       error
}

// Begun, in the context a transaction begins with (Learn), learns its
// connection. Committed: a query carried its COMMIT (a count of
// statements then leaves out the COMMIT bun reports).
type Begun struct {
	Conn      *Conn
	Committed bool
}

type begunKey struct{}

// Learn is ctx for a transaction to begin with, and what it learns.
func Learn(ctx context.Context) (context.Context, *Begun) {
	b := &Begun{}
	return context.WithValue(ctx, begunKey{}, b), b
}

// BegunOf is what the transaction of ctx learnt (Learn), or nil.
func BegunOf(ctx context.Context) *Begun {
	b, _ := ctx.Value(begunKey{}).(*Begun)
	return b
}

// commitAfter, in a query's context, asks for the transaction's COMMIT to
// go with it.
type commitAfter struct{}

// CarryCommit is ctx for a transaction's last query, which then carries
// its COMMIT where the connection can (Conn.CanCarry).
func CarryCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, commitAfter{}, true)
}

// Sent is how many statements were sent or kept on the connection so far:
// a caller that notes it can tell whether any went since.
func (c *Conn) Sent() uint64 { return c.sent }

// CanCarry reports whether the connection's transaction began here, and
// so may carry its COMMIT with its last query (CarryCommit).
func (c *Conn) CanCarry() bool { return c.tx != nil }

// begin starts a read-write transaction with the server's isolation level.
const begin = "BEGIN READ WRITE; "

func wrapPQ(c driver.Conn, sock *stallConn) driver.Conn {
	if pc, ok := c.(pqConn); ok {
		return &Conn{pqConn: pc, sock: sock}
	}
	return c
}

// with is q with the kept statements in front of it, or, when q has
// arguments (the extended protocol takes one statement), q after they
// were sent alone.
func (c *Conn) with(ctx context.Context, q string, args []driver.NamedValue) (string, error) {
	if len(args) > 0 || c.kept == "" {
		return q, c.sendKept(ctx)
	}
	q, c.kept, c.beginKept = c.kept+q, "", false
	return q, nil
}

// sendKept sends the kept statements alone, if any.
func (c *Conn) sendKept(ctx context.Context) error {
	if c.kept == "" {
		return nil
	}
	kept := c.kept
	c.kept, c.beginKept = "", false
	_, err := c.pqConn.ExecContext(ctx, kept, nil)
	return err
}

func (c *Conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
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

func (c *Conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.sent++
	q, err := c.with(ctx, q, args)
	if err != nil {
		return nil, err
	}
	if ctx.Value(commitAfter{}) == nil || len(args) > 0 || c.tx == nil {
		return c.pqConn.QueryContext(ctx, q, args)
	}
	c.ending, c.over, c.failed, c.tx.Committed = true, false, nil, true
	rows, err := c.pqConn.QueryContext(ctx, q+"; COMMIT", nil)
	if err != nil {
		// The error came before the query's rows, so not from the COMMIT
		// after them, which did not run.
		return nil, err
	}
	return &commitRows{Rows: rows, c: c}, nil
}

// commitRows are the rows of a query that carried its COMMIT. Once read to
// the end they tell their connection whether the COMMIT ran.
type commitRows struct {
	driver.Rows
	c *Conn
}

func (r *commitRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err != nil {
		r.ended(err)
	}
	return err
}

func (r *commitRows) Close() error {
	err := r.Rows.Close() // reads the rest, to the end of the query
	r.ended(err)
	return err
}

// ended learns from the last command tag whether the COMMIT ran: its own
// tag, or the query's with the COMMIT's error after it. Any other, and the
// query failed before it. A driver that does not say is taken at its
// error (a rollback of a transaction that was over then only costs the
// connection).
func (r *commitRows) ended(err error) {
	if err != nil && err != io.EOF && r.c.failed == nil {
		r.c.failed = err
	}
	tag := ""
	if tagged, ok := r.Rows.(interface{ Tag() string }); ok {
		tag = tagged.Tag()
	} else if r.c.failed == nil {
		tag = "COMMIT"
	}
	r.c.over = tag == "COMMIT" || tag == "ROLLBACK" || tag == "SELECT"
	if tag == "ROLLBACK" && r.c.failed == nil { // the transaction had failed before
		r.c.failed = errRolledBack
	}
}

// errRolledBack is a carried COMMIT's answer in a transaction that had
// failed: PostgreSQL rolls it back instead.
var errRolledBack = errors.New("pgwire: the transaction was rolled back at its commit")

func (c *Conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
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
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.kept, c.beginKept, c.tx, c.ending, c.over = "", false, nil, false, false
	o := BegunOf(ctx)
	if o != nil {
		o.Conn = c
	}
	if tx, ok := c.pqConn.(driver.Tx); ok && opts.Isolation == driver.IsolationLevel(sql.LevelDefault) && !opts.ReadOnly {
		// A BEGIN sent at once finds a pooled connection that died while
		// idle, and database/sql begins again on another. A kept one
		// would find it with the write's first statement, past where
		// anything begins again: so it is looked at now.
		if c.sock != nil && c.sock.gone() {
			return nil, driver.ErrBadConn
		}
		// Only a transaction begun here may carry its COMMIT: lib/pq's
		// own has a watcher of its context that its Commit ends.
		c.kept, c.beginKept, c.tx = begin, true, o
		return pgTx{c: c, Tx: tx}, nil
	}
	tx, err := c.pqConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return pgTx{c: c, Tx: tx}, nil
}

func (c *Conn) ResetSession(ctx context.Context) error {
	c.kept, c.beginKept, c.tx, c.ending, c.over = "", false, nil, false, false
	return c.pqConn.ResetSession(ctx)
}

// pgTx sends what its connection kept before it commits, and drops it
// when it rolls back. A transaction whose BEGIN was never sent has nothing
// on the server to end.
type pgTx struct {
	c *Conn
	driver.Tx
}

func (t pgTx) Commit() error {
	if t.c.ending {
		t.c.ending = false
		if t.c.over {
			return t.c.failed // nil: a write's flush has read its answer
		}
		return t.Tx.Commit() // it did not run: lib/pq's rolls back and says so
	}
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
	began := !t.c.beginKept && !(t.c.ending && t.c.over)
	t.c.kept, t.c.beginKept, t.c.ending = "", false, false
	if !began {
		return nil
	}
	return t.Tx.Rollback()
}
