// Package e2e drives Hostmint the way its users meet it: a real CoreDNS
// server (in-process, or the built binary) on loopback ports, spoken to over
// HTTP and DNS (UDP and TCP), on SQLite and on a real PostgreSQL.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/transfer"
	_ "github.com/coredns/coredns/plugin/tsig"
	"github.com/hostmint/hostmint/plugin/hostname"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

func TestMain(m *testing.M) {
	// The same insertion coredns-build does.
	if err := dnsserver.SetDirectives(hostname.Directives(dnsserver.Directives)); err != nil {
		panic(err)
	}
	dnsserver.Quiet, caddy.Quiet = true, true
	caddy.RegisterEventHook("e2e", func(ev caddy.EventName, info any) error {
		if i, ok := info.(*caddy.Instance); ok && ev == caddy.InstanceStartupEvent {
			instances.Store(string(i.Caddyfile().Body()), i)
		}
		return nil
	})
	code := m.Run()
	cleanupBinary()
	os.Exit(code)
}

// options shape a server's hostname block.
type options struct {
	dialect storage.Dialect
	dsn     string // "" for a fresh database
	profile int
	idle    string   // idle_expiry
	extra   []string // lines of the hostname block
	block   []string // lines of the server block besides hostname (transfer, tsig)
	dir     string   // data directory; "" for a fresh one
	dnsPort int      // 0: a free one
}

// server is one running Hostmint.
type server struct {
	t        testing.TB
	api      string // base URL
	dnsAddr  string
	admin    string
	dir      string
	dsn      string
	dialect  storage.Dialect
	corefile string
	inst     *caddy.Instance
}

// handedOut are the ports freePort has given this test process: the OS may
// offer a closed port again before its first taker has bound it, and two
// parallel servers must never be handed the same one.
var (
	portsMu   sync.Mutex
	handedOut = map[int]bool{}
)

func freePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if handedOut[port] {
			continue
		}
		// The DNS server needs the UDP port too.
		if u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			u.Close()
			handedOut[port] = true
			return port
		}
	}
}

// corefile writes a Corefile for o; the zone is example.org with
// ns1.example.org at the DNS address.
func corefile(t testing.TB, o *options) (text string, s *server) {
	t.Helper()
	if o.dialect == "" {
		o.dialect = storage.SQLite
	}
	if o.profile == 0 {
		o.profile = 1
	}
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.dsn == "" {
		if o.dialect == storage.SQLite {
			o.dsn = filepath.Join(o.dir, "hostmint.db")
		} else {
			o.dsn = storagetest.DSN(t, o.dialect)
		}
	}
	dnsPort, apiPort := o.dnsPort, freePort(t)
	if dnsPort == 0 {
		dnsPort = freePort(t)
	}
	s = &server{
		t: t, dir: o.dir, dsn: o.dsn, dialect: o.dialect,
		api:     fmt.Sprintf("http://127.0.0.1:%d", apiPort),
		dnsAddr: fmt.Sprintf("127.0.0.1:%d", dnsPort),
	}
	lines := []string{
		fmt.Sprintf("profile %d", o.profile),
		fmt.Sprintf("storage %s %s", o.dialect, o.dsn),
		fmt.Sprintf("api 127.0.0.1:%d", apiPort),
		"base_url " + s.api,
		"admin_token_file " + filepath.Join(o.dir, "admin.token"),
		"domain example.org",
		"nameserver ns1.example.org " + s.dnsAddr,
		"feed_poll 200ms",
	}
	if o.idle != "" {
		lines = append(lines, "idle_expiry "+o.idle)
	}
	lines = append(lines, o.extra...)
	text = fmt.Sprintf(".:%d {\n  bind 127.0.0.1\n  hostname {\n    %s\n  }\n  %s\n  errors\n}\n", dnsPort,
		strings.Join(lines, "\n    "), strings.Join(o.block, "\n  "))
	s.corefile = text
	return text, s
}

// start runs a server in this process.
func start(t testing.TB, o options) *server {
	t.Helper()
	text, s := corefile(t, &o)
	inst, err := caddy.Start(caddy.CaddyfileInput{Contents: []byte(text), Filepath: "Corefile", ServerTypeName: "dns"})
	if err != nil {
		t.Fatalf("starting CoreDNS: %v\n%s", err, text)
	}
	s.inst = inst
	t.Cleanup(s.stop)
	s.ready()
	return s
}

// instances are the newest CoreDNS instance of each Corefile: a server
// reloads itself when its TSIG keys change (dynamic_update), and the
// instance the test started is then stopped already.
var instances sync.Map // Corefile text -> *caddy.Instance

// stop shuts the server down as SIGTERM does: the plugins' shutdown
// callbacks (store, feed, API listener), then the servers.
// A reload under way as it stops starts a newer instance, whose servers
// the stopped one's Wait waits for too (a reload's instances share it):
// that one is stopped as well, until none newer appears.
func (s *server) stop() {
	if s.inst == nil {
		return
	}
	stopped := map[*caddy.Instance]bool{}
	for {
		i := s.inst
		if v, ok := instances.Load(s.corefile); ok {
			i = v.(*caddy.Instance)
		}
		if stopped[i] {
			break
		}
		stopped[i] = true
		for _, err := range i.ShutdownCallbacks() {
			s.t.Errorf("shutdown: %v", err)
		}
		i.Stop()
		s.inst = i
		time.Sleep(100 * time.Millisecond) // for a reload that began before its shutdown
	}
	s.inst.Wait()
	s.inst = nil
}

// ready waits for health 200 and reads the admin token.
func (s *server) ready() {
	s.t.Helper()
	if err := s.waitReady(20 * time.Second); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		resp, err := http.Get(s.api + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("health at %s never answered 200 (last error %v)", s.api, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "admin.token"))
	if err != nil {
		return err
	}
	s.admin = strings.TrimSpace(string(b))
	return nil
}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// response is a decoded HTTP answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r response) str(key string) string {
	v, _ := r.body[key].(string)
	return v
}

// do sends a request; body may be nil, a string/[]byte (sent as is) or a
// value encoded as JSON. token is sent as a bearer token if not "".
func (s *server) do(method, path, token string, body any) response {
	s.t.Helper()
	return s.doWith(method, path, token, body, nil)
}

// doWith is do with more request header fields.
func (s *server) doWith(method, path, token string, body any, header map[string]string) response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.api+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			s.t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return r
}

// must sends a request and fails unless the status is want.
func (s *server) must(want int, method, path, token string, body any) response {
	s.t.Helper()
	r := s.do(method, path, token, body)
	if r.status != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r
}

// account makes an account on plan (with an optional cap) and a key for it.
func (s *server) account(plan string, cap ...int) (id, key string) {
	s.t.Helper()
	body := map[string]any{"name": "team " + plan, "plan": plan}
	if len(cap) > 0 {
		body["cap"] = cap[0]
	}
	id = s.must(201, "POST", "/api/admin/accounts", s.admin, body).str("id")
	key = s.must(201, "POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"name": "k"}).str("key")
	return id, key
}

// query asks the server over proto ("udp" or "tcp").
func (s *server) query(name string, qtype uint16, proto string) *dns.Msg {
	s.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, s.dnsAddr)
	if err != nil {
		s.t.Fatalf("query %s %s over %s: %v", name, dns.TypeToString[qtype], proto, err)
	}
	return r
}

// addrs is the A/AAAA data of an answer, or the rcode name when it failed.
func addrs(m *dns.Msg) []string {
	if m.Rcode != dns.RcodeSuccess {
		return []string{dns.RcodeToString[m.Rcode]}
	}
	out := []string{}
	for _, rr := range m.Answer {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		}
	}
	return out
}

// resolves waits until name answers want over UDP and TCP.
func (s *server) resolves(name string, qtype uint16, want ...string) {
	s.t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		deadline := time.Now().Add(3 * time.Second)
		for {
			got := addrs(s.query(name, qtype, proto))
			if strings.Join(got, ",") == strings.Join(want, ",") {
				break
			}
			if time.Now().After(deadline) {
				s.t.Fatalf("%s %s over %s: got %v, want %v", name, dns.TypeToString[qtype], proto, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
