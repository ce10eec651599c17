package e2e

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Two nodes (two processes of the built binary) on one PostgreSQL see each
// other's writes through the change feed, well within a second.
func TestTwoNodesShareWrites(t *testing.T) {
	a, _ := spawn(t, options{dialect: storage.Postgres})
	b, _ := spawn(t, options{dialect: storage.Postgres, dsn: a.dsn})
	_, key := a.account("pro")

	var lags []time.Duration
	for i := 0; i < 20; i++ {
		ip := fmt.Sprintf("198.41.0.%d", i+1)
		h := a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": ip})
		t0 := time.Now()
		b.resolves(h.str("hostname"), dns.TypeA, ip)
		lags = append(lags, time.Since(t0))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("propagation A -> B over %d creates: p50 %v, max %v", len(lags), lags[len(lags)/2], lags[len(lags)-1])
	if lags[len(lags)-1] > time.Second {
		t.Errorf("a write took %v to reach the second node", lags[len(lags)-1])
	}

	// Updates and releases on B reach A.
	h := b.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.200", "label": "shared"})
	a.resolves("shared.example.org", dns.TypeA, "198.41.0.200")
	b.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "2001:500:2::c"})
	a.resolves("shared.example.org", dns.TypeAAAA, "2001:500:2::c")
	b.must(200, "DELETE", "/api/v1/hostnames/"+h.str("id"), key, nil)
	a.resolves("shared.example.org", dns.TypeAAAA, "NXDOMAIN")

	// A domain added on A is served by B; a key revoked on A stops on B.
	a.must(201, "POST", "/api/admin/domains", a.admin, map[string]any{"name": "more.example.net"})
	eventually(t, time.Second, func() bool {
		return b.query("more.example.net", dns.TypeSOA, "udp").Rcode == dns.RcodeSuccess
	}, "the new domain never reached node B")
	_, key2 := a.account("free")
	b.must(200, "GET", "/api/v1/hostnames", key2, nil) // cached on B now
	id := strings.SplitN(key2, "_", 3)[1]
	a.must(200, "DELETE", "/api/admin/keys/"+id, a.admin, nil)
	eventually(t, time.Second, func() bool {
		return b.do("GET", "/api/v1/hostnames", key2, nil).status == 401
	}, "a key revoked on node A still works on node B")
}

// The binary stops cleanly on SIGTERM, comes back with its data, and a
// reload (SIGUSR1) keeps serving without leaking the API listener.
func TestBinaryRestartAndReload(t *testing.T) {
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, p := spawn(t, options{dialect: d})
			_, key := s.account("pro")
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "stays"})

			p.cmd.Process.Signal(syscall.SIGUSR1)
			eventually(t, 10*time.Second, func() bool { return strings.Contains(p.output(), "Reloading complete") },
				"no reload after SIGUSR1:\n%s", p.output())
			s.ready()
			s.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil)
			s.resolves("stays.example.org", dns.TypeA, "198.41.0.4")
			if out := p.output(); strings.Contains(out, "address already in use") || strings.Contains(out, "[ERROR]") {
				t.Fatalf("reload logged errors:\n%s", out)
			}

			p.kill(syscall.SIGTERM)
			if !p.cmd.ProcessState.Success() && p.cmd.ProcessState.ExitCode() != 0 {
				t.Logf("exit: %v\n%s", p.cmd.ProcessState, p.output())
			}
			s2, _ := spawn(t, options{dialect: d, dir: s.dir, dsn: s.dsn})
			s2.resolves("stays.example.org", dns.TypeA, "198.41.0.4")
			s2.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil)
		})
	}
}

// The README walkthrough, resolved with the real dig over UDP and TCP.
func TestWalkthroughWithDig(t *testing.T) {
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatal("dig is not installed: run ./scripts/test-deps.sh")
	}
	s, _ := spawn(t, options{})
	_, key := s.account("pro")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "my-laptop"})
	host, port, _ := strings.Cut(s.dnsAddr, ":")
	dig := func(args ...string) string {
		out, err := exec.Command("dig", append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=1"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("dig %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, proto := range []string{"+notcp", "+tcp"} {
		if got := strings.TrimSpace(dig(proto, "+short", h.str("hostname"), "A")); got != "198.41.0.4" {
			t.Errorf("dig %s +short: %q", proto, got)
		}
		out := dig(proto, "nothing.example.org", "A")
		if !strings.Contains(out, "status: NXDOMAIN") || !strings.Contains(out, "flags: qr aa") || !strings.Contains(out, "IN\tSOA") {
			t.Errorf("dig %s for a missing name:\n%s", proto, out)
		}
	}
	if out := dig("www.example.com", "A"); !strings.Contains(out, "status: REFUSED") {
		t.Errorf("outside our domains:\n%s", out)
	}
	s.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "2001:500:2::c"})
	if got := strings.TrimSpace(dig("+short", "my-laptop.example.org", "AAAA")); got != "2001:500:2::c" {
		t.Errorf("after PUT: %q", got)
	}
}
