package storage

import (
	"context"
	"database/sql/driver"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// On PostgreSQL the write path's hottest statements are prepared: parsed,
// analysed and planned once per connection instead of on every call. Sent
// as text, with values inlined the way bun writes them, parsing and
// planning were 38 % of the database's CPU under a stream of creates, more
// than running the statements. SQLite needs none of this (an in-process
// library, its statements cost microseconds), so there the same methods
// run their bun queries.
//
// They are SQL-level prepared statements (PREPARE when a connection opens,
// EXECUTE name(args) after), not the protocol's: they live and die with
// the session, so the pool keeps no per-connection state, nothing is sent
// to close them, and a connection the server dropped is replaced by one
// that prepares them again.

// pgStatement is one prepared statement. Its text is built by bun with
// $n placeholders where the values go, so it names the model's columns the
// way the rest of the store does.
type pgStatement struct {
	name  string
	build func(db *bun.DB) string
	once  sync.Once
	text  string // the statement
	call  string // "EXECUTE name(?, ...)", one ? a placeholder
}

// pgStatements are every statement newPGStatement made: each connection
// prepares them all when it opens.
var pgStatements []*pgStatement

func newPGStatement(name string, build func(db *bun.DB) string) *pgStatement {
	s := &pgStatement{name: "hostmint_" + name, build: build}
	pgStatements = append(pgStatements, s)
	return s
}

var placeholder = regexp.MustCompile(`\$([0-9]+)`)

// prepareAll is the one query that prepares every statement. A store
// calls it before it runs any of them.
func prepareAll(db *bun.DB) string {
	var b strings.Builder
	for _, s := range pgStatements {
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

// preparing opens connections that prepare the statements, once the
// schema they name exists (arm).
type preparing struct {
	driver.Connector
	text atomic.Pointer[string]
}

func (c *preparing) Connect(ctx context.Context) (driver.Conn, error) {
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

// execute is the call of s with args, to be run or scanned like any bun
// query (and counted like one).
func (q Queries) execute(s *pgStatement, args ...any) *bun.RawQuery {
	return q.db.NewRaw(s.call, args...)
}

// pgCall is one prepared statement of executeAll: its arguments and where
// its row goes.
type pgCall struct {
	s    *pgStatement
	args []any
	dest any
}

// executeAll runs calls in one round trip (one simple query holds them)
// and scans the row each returns into its dest; found tells which
// returned one. For reads a write needs together, while its account's
// other writes wait.
func (q Queries) executeAll(ctx context.Context, calls ...pgCall) (found []bool, err error) {
	var (
		text []string
		args []any
	)
	for _, c := range calls {
		text = append(text, c.s.call)
		args = append(args, c.args...)
	}
	found = make([]bool, len(calls))
	rows, err := q.db.QueryContext(ctx, strings.Join(text, "; "), args...)
	if err != nil {
		return found, err
	}
	defer rows.Close()
	db := q.db.NewSelect().DB()
	for i, c := range calls {
		if i > 0 && !rows.NextResultSet() {
			break
		}
		// Next is not asked again once it said no: past the end of a
		// result set it would read the next one's rows as this one's.
		if !rows.Next() {
			continue
		}
		if err := db.ScanRow(ctx, rows, c.dest); err != nil {
			return found, err
		}
		found[i] = true
		for rows.Next() { // a row past the first: not ours to read
		}
	}
	if err := rows.Err(); err != nil {
		return found, err
	}
	return found, rows.Close()
}

// setAll is the SET list of an UPDATE of every column of model's table but
// its primary key, with placeholders from $2 on ($1 is the key); rowArgs
// gives the values in the same order.
func setAll(db *bun.DB, q *bun.UpdateQuery, model any) *bun.UpdateQuery {
	for i, f := range db.Table(reflect.TypeOf(model).Elem()).DataFields {
		q = q.Set("? = $"+strconv.Itoa(i+2), bun.Ident(f.Name))
	}
	return q
}

// rowArgs are the key and then every other column of the row v points to,
// in the order setAll numbers them.
func rowArgs(db bun.IDB, v any) []any {
	t := db.Dialect().Tables().Get(reflect.TypeOf(v).Elem())
	rv := reflect.ValueOf(v).Elem()
	args := make([]any, 0, len(t.Fields))
	for _, f := range t.PKs {
		args = append(args, f.Value(rv).Interface())
	}
	for _, f := range t.DataFields {
		fv := f.Value(rv)
		if f.NullZero && f.IsZero(fv) {
			args = append(args, nil)
			continue
		}
		args = append(args, fv.Interface())
	}
	return args
}
