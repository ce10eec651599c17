package storage

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The lock's statement names its columns: a later migration's column does
// not change what a running node's prepared statement returns.
func TestLockHostnameColumns(t *testing.T) {
	q := lockHostname.build(bun.NewDB(nil, pgdialect.New()))
	if strings.Contains(q, "*") || !strings.Contains(q, `"hostname"."cert_expires_at"`) || !strings.Contains(q, "account_suspended_at") {
		t.Errorf("lock_hostname: %s", q)
	}
}
