package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// A read-only DNS node (storage postgres DSN readonly), as an operator at
// a second site runs one: it answers DNS from the writers' database, its
// API answers health only, UPDATE is refused, and past max_lag it
// reports not ready while it keeps answering. Its connections are
// read-only transactions (as on a hot standby), so any write it tried
// would fail and show in its output. The real standby and its failover
// are in standby_test.go.
func TestReadOnlyNode(t *testing.T) {
	t.Parallel()
	wo := updateOptions(t, storage.Postgres, 1)
	w, wp := spawn(t, wo)
	ro := wo
	ro.dsn = w.dsn + "?default_transaction_read_only=on readonly"
	if strings.Contains(w.dsn, "?") {
		ro.dsn = w.dsn + "&default_transaction_read_only=on readonly"
	}
	ro.extra = append(ro.extra, "max_lag 3s")
	readyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ro.block = []string{"ready " + readyAddr + " {\n    monitor continuously\n  }"}
	r, rp := spawn(t, ro)
	readyStatus := func() int {
		resp, err := http.Get("http://" + readyAddr + "/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	eventually(t, 5*time.Second, func() bool { return readyStatus() == 200 }, "the ready plugin never reports the read-only node ready")

	h := r.must(200, "GET", "/api/health", "", nil)
	if h.body["read_only"] != true || h.body["lag_seconds"].(float64) > 3 {
		t.Errorf("read-only node's health: %s", h.raw)
	}
	if h := w.must(200, "GET", "/api/health", "", nil); h.body["read_only"] != false || h.body["lag_seconds"].(float64) != 0 {
		t.Errorf("writer's health: %s", h.raw)
	}

	acct, key := w.account("business")
	made := w.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.40", "label": "site2"})
	r.resolves("site2.example.org", dns.TypeA, "198.41.0.40")
	w.must(200, "PUT", "/api/v1/hostnames/"+made.str("id"), key, map[string]any{"ip": "198.41.0.41"})
	r.resolves("site2.example.org", dns.TypeA, "198.41.0.41")

	for _, c := range []struct{ method, path, token string }{
		{"POST", "/api/v1/hostnames", key},
		{"GET", "/api/v1/hostnames", key},
		{"GET", "/api/admin/accounts/" + acct, w.admin},
		{"GET", "/openapi.json", ""},
		{"GET", "/", ""},
		{"GET", "/no/such/path", ""},
	} {
		got := r.do(c.method, c.path, c.token, map[string]any{"ip": "198.41.0.42"})
		if got.status != 503 || got.str("code") != "SERVICE_UNAVAILABLE" || !strings.Contains(got.str("error"), "read-only") {
			t.Errorf("%s %s on the read-only node: %d %s, want 503 SERVICE_UNAVAILABLE saying it is read-only", c.method, c.path, got.status, got.raw)
		}
	}

	// UPDATE: verified with the store's keys, then refused as the API is.
	k := w.tsig("/api/admin/accounts/"+acct+"/tsig-keys", w.admin, nil)
	eventually(t, 10*time.Second, func() bool {
		out, _ := r.nsupdate(k, "update add up.example.org 60 A 198.41.0.43")
		return strings.Contains(out, "REFUSED")
	}, "an UPDATE to the read-only node is not REFUSED")
	if got := w.lookup("up.example.org", dns.TypeA); got != "NXDOMAIN" {
		t.Errorf("up.example.org after the refused UPDATE: %s", got)
	}

	// No writer stamps the heartbeat: past max_lag the node is not ready,
	// and answers DNS all the same.
	wp.kill(syscall.SIGTERM)
	eventually(t, 10*time.Second, func() bool {
		got := r.do("GET", "/api/health", "", nil)
		return got.status == 503 && strings.Contains(got.str("error"), "max_lag")
	}, "the read-only node stays ready with no writer stamping the heartbeat")
	if st := readyStatus(); st != 503 {
		t.Errorf("the ready plugin (monitor continuously) answers %d past max_lag, want 503", st)
	}
	r.resolves("site2.example.org", dns.TypeA, "198.41.0.41")
	for _, bad := range []string{"read-only transaction", "cannot execute"} {
		if out := rp.output(); strings.Contains(out, bad) {
			t.Errorf("the read-only node tried to write (%q):\n%s", bad, out)
		}
	}
}

// A read-only node refuses to start on a database whose schema is not its
// build's, and says why.
func TestReadOnlyNodeSchema(t *testing.T) {
	t.Parallel()
	dsn := storagetest.DSN(t, storage.Postgres) // no schema: no writer ever ran on it
	o := options{dialect: storage.Postgres, dsn: dsn + " readonly"}
	text, s := corefile(t, &o)
	path := filepath.Join(s.dir, "Corefile")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary(t), "-conf", path).CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "no Hostmint schema") {
		t.Errorf("read-only node on an empty database: %v, output:\n%s", err, out)
	}
}
