package storage

import (
	"context"
	"reflect"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
)

// On PostgreSQL the write path's hottest statements are prepared once per
// connection (pgwire.NewStatement, which says why); SQLite needs none of
// it (an in-process library, its statements cost microseconds), so there
// the same methods run their bun queries.

// execute is the call of s with args, to be run or scanned like any bun
// query (and counted like one).
func (q Queries) execute(s *pgwire.Statement, args ...any) *bun.RawQuery {
	return q.db.NewRaw(s.Call(), args...)
}

// pgCall is one prepared statement of executeAll: its arguments and where
// its row goes.
type pgCall struct {
	s    *pgwire.Statement
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
		text = append(text, c.s.Call())
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
