package main

import (
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// peer is what one other server did on the bench's names at one size.
// Zero is "not measured": the table prints "-" or "n/a" for it.
type peer struct {
	qps, signed        float64       // dnsperf, unsigned and with the DO bit
	cpu, signedCPU     time.Duration // the server's CPU per answer in those runs
	start, startSigned time.Duration
	rss, rssSigned     float64 // MiB after start-up
	create, update     latencies
	load               time.Duration // bulk load into its own store
	workers            int           // Knot's UDP workers
}

// peers are Knot and PowerDNS, measured per size beside Hostmint (CoreDNS's
// file plugin, the third, lives in result as it always has).
type peers struct {
	knot, pdns peer
}

// peerLimit bounds a peer's start-up: Knot signs the whole zone before it
// answers, which at a million names takes minutes on two cores.
const peerLimit = 15 * time.Minute

// checkPeers fails early, naming the package, when a peer is missing.
func checkPeers() error {
	for _, need := range []struct{ bin, pkg string }{
		{"knotd", "knot"}, {"pdns_server", "pdns-server"}, {"pdnsutil", "pdns-server"},
	} {
		if _, err := exec.LookPath(need.bin); err != nil {
			return fmt.Errorf("%s is not installed (Debian package %s): run ./scripts/test-deps.sh, or leave the peers out with -skip peers", need.bin, need.pkg)
		}
	}
	if _, err := pdnsSchema(); err != nil {
		return err
	}
	return nil
}

// measurePeers runs Knot, then PowerDNS, on the names of the zone file in
// dir; each one's temp dir lives under dir, and its database is dropped.
func measurePeers(r *result, dir, queries, pg string, seconds, clients, ops, knotWorkers int) error {
	var err error
	if r.peers.knot, err = measureKnot(dir, queries, seconds, knotWorkers); err != nil {
		return fmt.Errorf("knot: %w", err)
	}
	log.Printf("%d names: Knot done", r.names)
	if r.peers.pdns, err = measurePDNS(dir, queries, pg, r.names, seconds, clients, ops); err != nil {
		return fmt.Errorf("powerdns: %w", err)
	}
	log.Printf("%d names: PowerDNS done", r.names)
	return nil
}

// startPeer starts cmd, its output in dir/log, and waits until it answers
// the probe name on port (with a signature when signed is set).
func startPeer(cmd *exec.Cmd, dir string, port int, signed bool) (*server, error) {
	out, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// A bench stopped half-way must not leave a peer holding its port.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s := &server{cmd: cmd, dir: dir, dns: port}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for !answers(port, signed) {
		if time.Since(t0) > peerLimit || exited(cmd.Process.Pid) {
			s.stop()
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			return nil, fmt.Errorf("%s did not answer within %s:\n%s", filepath.Base(cmd.Path), peerLimit, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.started = time.Since(t0)
	return s, nil
}

// exited tells whether a child has died (on a bad config, say), so that
// the bench does not wait out peerLimit for nothing: until it is waited
// for, it is a zombie.
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses, which may hold spaces.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2] == 'Z'
		}
	}
	return false
}

// answers asks for the probe name's A record; with signed, only an answer
// that carries its RRSIG counts.
func answers(port int, signed bool) bool {
	m := new(dns.Msg)
	m.SetQuestion("h0000000."+zone+".", dns.TypeA)
	if signed {
		m.SetEdns0(1232, true)
	}
	c := &dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return false
	}
	var a, sig bool
	for _, rr := range r.Answer {
		switch rr.(type) {
		case *dns.A:
			a = true
		case *dns.RRSIG:
			sig = true
		}
	}
	return a && (sig || !signed)
}

// signedDenial checks that a missing name is denied with a signed NSEC:
// a peer that left it out (PowerDNS without ordernames, say) would be
// measured doing less work than Hostmint does.
func signedDenial(port int) error {
	m := new(dns.Msg)
	m.SetQuestion("m0000000."+zone+".", dns.TypeA)
	m.SetEdns0(1232, true)
	r, err := dns.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	var nsec, sig bool
	for _, rr := range r.Ns {
		switch rr.(type) {
		case *dns.NSEC:
			nsec = true
		case *dns.RRSIG:
			sig = true
		}
	}
	if !nsec || !sig {
		return fmt.Errorf("a missing name is denied without a signed NSEC:\n%s", r)
	}
	return nil
}

// copyFile gives a peer its own copy of the zone file, which Knot may
// rewrite.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
