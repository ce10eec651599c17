package storage

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The locks' statements name their columns: a later migration's column
// does not change what a running node's prepared statement returns.
func TestLockHostnameColumns(t *testing.T) {
	db := bun.NewDB(nil, pgdialect.New())
	if q := lockHostname.Build(db); strings.Contains(q, "*") || !strings.Contains(q, `"hostname"."cert_expires_at"`) || !strings.Contains(q, "account_suspended_at") {
		t.Errorf("lock_hostname: %s", q)
	}
	if q := lockHostnameByLabel.Build(db); strings.Contains(q, "*") || !strings.Contains(q, `"hostname"."cert_expires_at"`) || !strings.Contains(q, "FOR UPDATE") {
		t.Errorf("lock_hostname_by_label: %s", q)
	}
}

// No prepared statement compares a status with a parameter: the partial
// indexes name their statuses, and a plan made for any status cannot use
// them, so PostgreSQL would plan the statement again on every call (or,
// with a plan made once, scan the table).
func TestPreparedStatusLiteral(t *testing.T) {
	db := bun.NewDB(nil, pgdialect.New())
	status := regexp.MustCompile(`status"? *(<>|=|!=) *\$[0-9]`)
	for _, s := range pgwire.Statements() {
		q := s.Build(db)
		if i := strings.Index(q, "WHERE"); i >= 0 && status.MatchString(q[i:]) { // not an UPDATE's SET
			t.Errorf("%s compares a status with a parameter: %s", s.Name(), q)
		}
	}
}
