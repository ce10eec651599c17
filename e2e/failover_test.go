package e2e

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// failoverDSN is dsn as the README's runbook writes it for a primary that
// can move: lib/pq's key-value form with two hosts tried in order and only
// a writable one taken, quoted for the Corefile.
func failoverDSN(t *testing.T, dsn string, first, second *proxy) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	port := func(p *proxy) string {
		_, port, _ := net.SplitHostPort(p.addr)
		return port
	}
	return fmt.Sprintf(`"host=127.0.0.1,127.0.0.1 port=%s,%s user=%s dbname=%s sslmode=disable target_session_attrs=read-write"`,
		port(first), port(second), u.User.Username(), strings.TrimPrefix(u.Path, "/"))
}

// Two nodes whose DSN names two database hosts survive the first one
// going away, as when a managed PostgreSQL fails over to its standby: the
// API answers 503 while no host answers, then both nodes reconnect to the
// second host by themselves - writes resume, each node's feed (and its
// LISTEN) follows, and a write on one is served by the other - with no
// restart.
func TestDatabaseFailover(t *testing.T) {
	dsn := storagetest.DSN(t, storage.Postgres)
	u, _ := url.Parse(dsn)
	primary, standby := newProxy(t, u.Host), newProxy(t, u.Host)
	standby.cut() // the standby is not reachable as a primary until the failover
	multi := failoverDSN(t, dsn, primary, standby)
	a, _ := spawn(t, options{dialect: storage.Postgres, dsn: multi})
	b, _ := spawn(t, options{dialect: storage.Postgres, dsn: multi})
	_, key := a.account("pro")
	h := a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.10", "label": "before"})
	b.resolves("before.example.org", dns.TypeA, "198.41.0.10")

	// The failover: the old primary goes away for good, the standby is promoted.
	primary.close()
	if r := a.do("PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.11"}); r.status != 503 {
		t.Errorf("a write with no database host answering: %d %s", r.status, r.raw)
	}
	b.resolves("before.example.org", dns.TypeA, "198.41.0.10") // DNS answers from the index throughout
	standby.restore(t)

	for _, n := range []*server{a, b} {
		eventually(t, 15*time.Second, func() bool { return n.do("GET", "/api/health", "", nil).status == 200 },
			"a node's health did not recover after the failover")
	}
	eventually(t, 15*time.Second, func() bool {
		return a.do("PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.12"}).status == 200
	}, "writes did not resume on node A after the failover")
	b.resolves("before.example.org", dns.TypeA, "198.41.0.12")
	b.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.13", "label": "after"})
	a.resolves("after.example.org", dns.TypeA, "198.41.0.13")
}
