package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// server is one run of the built binary on its own Corefile and ports.
type server struct {
	cmd      *exec.Cmd
	dir      string
	dns, api int
	started  time.Duration // until it answered the probe name
}

// hostnameCorefile serves the bench zone from store (dialect and DSN),
// taking signed DNS UPDATE (whose TSIG secrets the certificate key seals);
// lines are more of the hostname block.
func hostnameCorefile(dnsPort, apiPort int, dir, dialect, dsn string, lines ...string) string {
	return fmt.Sprintf(`%s:%d {
    bind 127.0.0.1
    hostname {
        profile 1
        storage %s %s
        api 127.0.0.1:%d
        admin_token_file %s/admin.token
        cert_encryption_key_file %s/cert.key
        dynamic_update
        domain %s
        nameserver ns1.%s 127.0.0.1:%d
        %s
    }
    %s
}
`, zone, dnsPort, dialect, dsn, apiPort, dir, dir, zone, zone, dnsPort,
		strings.Join(append(lines, os.Getenv("BENCH_HOSTNAME")), "\n        "), os.Getenv("BENCH_EXTRA"))
}

func fileCorefile(dnsPort int, dir string) string {
	return fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    file %s/zone\n}\n", zone, dnsPort, dir)
}

// start runs bin on the Corefile made by corefile(dnsPort, apiPort) in a
// directory of its own under dir and waits until probe answers.
func start(bin, dir string, corefile func(dnsPort, apiPort int, dir string) string) (*server, error) {
	s := &server{dns: freePort(), api: freePort()}
	s.dir = filepath.Join(dir, fmt.Sprintf("node-%d", s.dns))
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"cert.key", "zone"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			os.WriteFile(filepath.Join(s.dir, f), b, 0o600)
		}
	}
	path := filepath.Join(s.dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile(s.dns, s.api, s.dir)), 0o600); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "-conf", path, "-quiet")
	s.cmd.Dir = s.dir
	log, _ := os.Create(filepath.Join(s.dir, "log"))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for s.lookup("h0000000."+zone) == "" {
		if time.Since(t0) > 120*time.Second {
			s.stop()
			out, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return nil, fmt.Errorf("the server did not answer within 120 s:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.started = time.Since(t0)
	return s, nil
}

func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// lookup asks the server for name's A record over UDP and returns the
// address, or "" when there is none (yet).
func (s *server) lookup(name string) string {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	c := &dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns)))
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return ""
	}
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			return a.A.String()
		}
	}
	return ""
}

// rss reads the resident set size and its peak (VmHWM) in MiB.
func (s *server) rss() (now, peak float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			now = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return now, peak
}

func (s *server) adminToken() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "admin.token"))
	return strings.TrimSpace(string(b)), err
}

// sign enables DNSSEC on the bench zone through the admin API and waits
// until the server answers with signatures.
func (s *server) sign() error {
	tok, err := s.adminToken()
	if err != nil {
		return err
	}
	req, _ := http.NewRequest("PATCH", fmt.Sprintf("http://127.0.0.1:%d/api/admin/domains/dom_bench", s.api), strings.NewReader(`{"dnssec":true}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("enabling DNSSEC: %s", resp.Status)
	}
	m := new(dns.Msg)
	m.SetQuestion("h0000000."+zone+".", dns.TypeA)
	m.SetEdns0(1232, true)
	for range 200 {
		r, err := dns.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns)))
		if err == nil && len(r.Answer) > 1 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no signatures 2 s after enabling DNSSEC")
}

// handedOut keeps one run from giving the same port to two servers.
var handedOut = map[int]bool{}

func freePort() int {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil && !handedOut[p] {
			u.Close()
			handedOut[p] = true
			return p
		}
	}
}
