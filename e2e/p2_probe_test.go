package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// nsNode is one node of a two-nameserver deployment: its server, its
// Corefile text (to start it again) and the running binary, if any.
type nsNode struct {
	s    *server
	text string
	p    *process
}

// twoNameservers writes the Corefiles of two profile-2 nodes on one
// PostgreSQL database that both list the same two nameservers: ns1 at node
// A's DNS address and ns2 at node B's. corefile() picks each node's DNS port
// itself, so B's Corefile is rewritten to the port A's names for ns2.
// With bConfirms false, B's Corefile gives ns1 an address where nothing
// answers, so B's own watcher never confirms anything and only A's can.
func twoNameservers(t *testing.T, bConfirms bool) (a, b *nsNode) {
	t.Helper()
	portB := freePort(t)
	ns2 := fmt.Sprintf("nameserver ns2.example.org 127.0.0.1:%d", portB)

	oa := options{dialect: storage.Postgres, profile: 2, extra: []string{ns2}}
	textA, sa := corefile(t, &oa)
	a = &nsNode{s: sa, text: textA}

	ob := options{dialect: storage.Postgres, dsn: oa.dsn, profile: 2, extra: []string{ns2}}
	textB, sb := corefile(t, &ob)
	_, ownPort, _ := strings.Cut(sb.dnsAddr, ":")
	ns1 := sa.dnsAddr
	if !bConfirms {
		ns1 = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	for old, repl := range map[string]string{
		".:" + ownPort + " {":                      fmt.Sprintf(".:%d {", portB),
		"nameserver ns1.example.org " + sb.dnsAddr: "nameserver ns1.example.org " + ns1,
	} {
		if strings.Count(textB, old) != 1 {
			t.Fatalf("node B's Corefile has %q %d times:\n%s", old, strings.Count(textB, old), textB)
		}
		textB = strings.Replace(textB, old, repl, 1)
	}
	sb.dnsAddr = fmt.Sprintf("127.0.0.1:%d", portB)
	sb.corefile = textB
	b = &nsNode{s: sb, text: textB}
	return a, b
}

// run starts the built binary on n's Corefile and waits until it is healthy.
func (n *nsNode) run(t *testing.T) {
	t.Helper()
	path := filepath.Join(n.s.dir, "Corefile")
	if err := os.WriteFile(path, []byte(n.text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &process{out: new(bytes.Buffer)}
	p.cmd = exec.Command(binary(t), "-conf", path)
	p.cmd.Dir = n.s.dir
	p.cmd.Stdout, p.cmd.Stderr = lockedWriter{p}, lockedWriter{p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	n.p = p
	if err := n.s.waitReady(25 * time.Second); err != nil {
		t.Fatalf("%v; server output:\n%s", err, p.output())
	}
}

// statusFor reads the hostname's status on n.
func (n *nsNode) statusFor(key, id string) string {
	return n.s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil).str("status")
}

// A hostname reads pending until every nameserver (two processes of the
// built binary on one PostgreSQL) serves it, then live; a nameserver that is
// down holds the next change at pending until it is back. Either node's
// watcher may confirm; in the second case only A's can, so its retries (with
// back-off) are what brings the hostname live.
func TestP2ProbeTwoNameservers(t *testing.T) {
	for _, bConfirms := range []bool{true, false} {
		variant := "both nodes confirm"
		if !bConfirms {
			variant = "only node A confirms"
		}
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			a, b := twoNameservers(t, bConfirms)
			a.run(t)
			_, key := a.s.team(t, "probe.example.net")

			// Only A runs: A serves the name at once, but it stays pending.
			h := a.s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
			id, name := h.str("id"), h.str("hostname")
			if h.str("status") != "pending" {
				t.Fatalf("create: %s", h.raw)
			}
			a.s.resolves(name, dns.TypeA, "198.41.0.4")
			holdsFor(t, 1500*time.Millisecond, func() bool { return a.statusFor(key, id) == "pending" },
				"%s went live while nameserver ns2 was not running", name)

			// B starts, loads the store and answers: the hostname goes live.
			t0 := time.Now()
			b.run(t)
			b.s.resolves(name, dns.TypeA, "198.41.0.4")
			eventually(t, 15*time.Second, func() bool { return a.statusFor(key, id) == "live" },
				"%s never went live once both nameservers served it (A's log:\n%s)", name, a.p.output())
			t.Logf("live %v after node B was started", time.Since(t0).Round(10*time.Millisecond))
			if st := b.statusFor(key, id); st != "live" {
				t.Fatalf("node B reads %s", st)
			}

			// B dies: a new address is served by A at once but stays pending.
			b.p.kill(syscall.SIGKILL)
			r := a.s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "2001:500:2::c"})
			if r.str("status") != "pending" || r.str("ip") != "2001:500:2::c" {
				t.Fatalf("PUT while ns2 is down: %s", r.raw)
			}
			a.s.resolves(name, dns.TypeAAAA, "2001:500:2::c")
			a.s.resolves(name, dns.TypeA)
			holdsFor(t, 1500*time.Millisecond, func() bool { return a.statusFor(key, id) == "pending" },
				"%s went live again while nameserver ns2 was down", name)

			// B comes back on the same addresses: live again.
			t0 = time.Now()
			b.run(t)
			b.s.resolves(name, dns.TypeAAAA, "2001:500:2::c")
			eventually(t, 15*time.Second, func() bool { return a.statusFor(key, id) == "live" },
				"%s never went live again once ns2 was back", name)
			t.Logf("live again %v after node B was restarted", time.Since(t0).Round(10*time.Millisecond))
		})
	}
}
