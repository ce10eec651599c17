package pgwire

import (
	"database/sql/driver"
	"errors"
	"io"
	"testing"
)

// taggedRows are rows that end with err after a last command tag, as
// lib/pq's do.
type taggedRows struct {
	driver.Rows
	tag string
	err error
}

func (r taggedRows) Next([]driver.Value) error { return r.err }
func (r taggedRows) Close() error              { return nil }
func (r taggedRows) Tag() string               { return r.tag }

// The last command tag of a query that carried its COMMIT says whether
// the COMMIT ran: if it did, the transaction is over and a rollback would
// find none (lib/pq then gives up the connection).
func TestCommitRowsEnded(t *testing.T) {
	failed := errors.New("failed")
	cases := []struct {
		tag      string
		err      error
		over     bool
		answered error
	}{
		{"COMMIT", io.EOF, true, nil},
		{"SELECT", failed, true, failed},  // the COMMIT failed
		{"INSERT", failed, false, failed}, // a statement before the query
		{"BEGIN", failed, false, failed},  // the query
		{"ROLLBACK", io.EOF, true, errRolledBack},
	}
	for _, c := range cases {
		t.Run(c.tag, func(t *testing.T) {
			conn := &Conn{}
			r := &commitRows{Rows: taggedRows{tag: c.tag, err: c.err}, c: conn}
			if err := r.Next(nil); err != c.err {
				t.Fatalf("next: %v", err)
			}
			r.Close()
			if conn.over != c.over || !errors.Is(conn.failed, c.answered) || (c.answered == nil) != (conn.failed == nil) {
				t.Errorf("over %v, failed %v; want %v, %v", conn.over, conn.failed, c.over, c.answered)
			}
		})
	}
}
