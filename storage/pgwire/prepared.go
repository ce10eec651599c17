package pgwire

import (
	"context"
	"database/sql/driver"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lib/pq"
	"github.com/uptrace/bun"
)

// On PostgreSQL the write path's hottest statements are prepared: parsed,
// analysed and planned once per connection instead of on every call. Sent
// as text, with values inlined the way bun writes them, parsing and
// planning were 38 % of the database's CPU under a stream of creates, more
// than running the statements.
//
// They are SQL-level prepared statements (PREPARE when a connection opens,
// EXECUTE name(args) after), not the protocol's: they live and die with
// the session, so the pool keeps no per-connection state, nothing is sent
// to close them, and a connection the server dropped is replaced by one
// that prepares them again.

// Statement is one prepared statement. Its text is built by bun with $n
// placeholders where the values go, so it names the model's columns the
// way the rest of the store does.
type Statement struct {
	name  string
	build func(db *bun.DB) string
	once  sync.Once
	text  string // the statement
	call  string // "EXECUTE name(?, ...)", one ? a placeholder
}

// statements are every statement NewStatement made: each connection
// prepares them all when it opens.
var statements []*Statement

// NewStatement registers a statement for every connection to prepare, as
// hostmint_<name>, with the text build makes. Call it from a package
// variable's initialiser: a connection prepares those registered by then.
func NewStatement(name string, build func(db *bun.DB) string) *Statement {
	s := &Statement{name: "hostmint_" + name, build: build}
	statements = append(statements, s)
	return s
}

// Statements are every statement registered.
func Statements() []*Statement { return statements }

// Name is the statement's prepared name.
func (s *Statement) Name() string { return s.name }

// Build is the statement's text on db's dialect.
func (s *Statement) Build(db *bun.DB) string { return s.build(db) }

// Call is "EXECUTE name(?, ...)", a ? a placeholder of bun's: what runs
// the statement, once a connection prepared it (Connector.Ready).
func (s *Statement) Call() string { return s.call }

var placeholder = regexp.MustCompile(`\$([0-9]+)`)

// prepareAll is the one query that prepares every statement.
func prepareAll(db *bun.DB) string {
	var b strings.Builder
	for _, s := range statements {
		s.once.Do(func() {
			s.text = s.build(db)
			n := 0
			for _, m := range placeholder.FindAllStringSubmatch(s.text, -1) {
				k, _ := strconv.Atoi(m[1])
				n = max(n, k)
			}
			s.call = "EXECUTE " + s.name + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
		})
		b.WriteString("PREPARE " + s.name + " AS " + s.text + ";\n")
	}
	return b.String()
}

// Connector opens lib/pq connections of this package's kind (Conn): they
// hold statements back, carry a write's COMMIT, give up on a silent
// server, and, once the schema they name exists (Ready), prepare the
// registered statements as they open.
type Connector struct {
	driver.Connector
	text  atomic.Pointer[string]
	stall atomic.Int64 // a read's timeout, ns: 0 until Ready
}

// NewConnector is a Connector to the server of dsn (lib/pq's form).
func NewConnector(dsn string) (*Connector, error) {
	pc, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	c := &Connector{Connector: pc}
	pc.Dialer(stallDialer{timeout: &c.stall})
	return c, nil
}

// Ready is called once the schema exists: from then on a read gives up
// after StallTimeout, and every connection opened prepares the registered
// statements, built on db's dialect. Those opened before (for migrations)
// should be let go: they have not.
func (c *Connector) Ready(db *bun.DB) {
	c.stall.Store(int64(StallTimeout))
	text := prepareAll(db)
	c.text.Store(&text)
}

func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	sock := &dialed{}
	conn, err := c.Connector.Connect(context.WithValue(ctx, dialed{}, sock))
	if err != nil {
		return nil, err
	}
	if text := c.text.Load(); text != nil {
		if _, err := conn.(driver.ExecerContext).ExecContext(ctx, *text, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return wrapPQ(conn, sock.c), nil
}
