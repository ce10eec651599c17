package storage

import (
	"context"
	"database/sql/driver"
	"reflect"
	"regexp"
	"slices"
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
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if text := c.text.Load(); text != nil {
		if _, err := conn.(driver.ExecerContext).ExecContext(ctx, *text, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return wrapPQ(conn), nil
}

// execute is the call of s with args, to be run or scanned like any bun
// query (and counted like one).
func (q Queries) execute(s *pgStatement, args ...any) *bun.RawQuery {
	return q.db.NewRaw(s.call, args...)
}

// executeBoth runs a with aArgs and then b with bArgs in one round trip
// (one simple query holds both) and scans the row each returns into aDest
// and bDest; found tells which returned one. For reads a write needs
// together before anything else, while its account's other writes wait.
func (q Queries) executeBoth(ctx context.Context, a *pgStatement, aArgs []any, aDest any, b *pgStatement, bArgs []any, bDest any) (found [2]bool, err error) {
	rows, err := q.db.QueryContext(ctx, a.call+"; "+b.call, append(slices.Clip(aArgs), bArgs...)...)
	if err != nil {
		return found, err
	}
	defer rows.Close()
	db := q.db.NewSelect().DB()
	for i, dest := range []any{aDest, bDest} {
		if i == 1 && !rows.NextResultSet() {
			break
		}
		if rows.Next() {
			if err := db.ScanRow(ctx, rows, dest); err != nil {
				return found, err
			}
			found[i] = true
		}
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
