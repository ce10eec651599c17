package storage

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The locks' statements name their columns: a later migration's column
// does not change what a running node's prepared statement returns.
func TestLockHostnameColumns(t *testing.T) {
	db := bun.NewDB(nil, pgdialect.New())
	if q := lockHostname.build(db); strings.Contains(q, "*") || !strings.Contains(q, `"hostname"."cert_expires_at"`) || !strings.Contains(q, "account_suspended_at") {
		t.Errorf("lock_hostname: %s", q)
	}
	if q := lockHostnameByLabel.build(db); strings.Contains(q, "*") || !strings.Contains(q, `"hostname"."cert_expires_at"`) || !strings.Contains(q, "FOR UPDATE") {
		t.Errorf("lock_hostname_by_label: %s", q)
	}
}
