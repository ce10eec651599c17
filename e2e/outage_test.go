package e2e

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// proxy forwards TCP to a target; cutting it makes the database unreachable
// for whoever connects through it (connections are closed, new ones reset).
// The listener stays open across a cut: a port given back to the system
// could be taken by another socket (any outgoing connection of a busy test
// run) before restore asks for it again.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	down         bool
	silent       bool // connections stay open and carry nothing: a frozen host
	conns        map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr, p.ln = ln.Addr().String(), ln
	go p.serve(ln)
	t.Cleanup(p.close)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if p.isDown() {
			reset(c)
			continue
		}
		if p.isSilent() {
			p.mu.Lock()
			p.conns[c] = true
			p.mu.Unlock()
			go io.Copy(io.Discard, c)
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			reset(c)
			continue
		}
		p.mu.Lock()
		if p.down { // cut while dialling: this one must not get through either
			p.mu.Unlock()
			reset(c)
			up.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding what it reads while the proxy is silent.
func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for n > 0 && p.isSilent() {
			time.Sleep(10 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) isSilent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}

// silence stops every byte both ways, on open connections and new ones,
// while keeping them all open, until restore.
func (p *proxy) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = true
}

// reset closes c with a TCP reset, the nearest a listening port gets to
// refusing a connection.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func (p *proxy) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// cut closes every connection through the proxy and resets new ones until
// restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// restore lets connections through again.
func (p *proxy) restore(*testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.silent = false, false
}

// close cuts for good and frees the port.
func (p *proxy) close() {
	p.cut()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
}

// viaProxy returns dsn rewritten to reach its server through a new proxy.
func viaProxy(t *testing.T, dsn string) (string, *proxy) {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	return u.String(), p
}

// With the database unreachable, DNS keeps answering from the index, the API
// answers 503 SERVICE_UNAVAILABLE promptly, health says so; when it returns,
// everything resumes.
func TestDatabaseOutage(t *testing.T) {
	dsn, p := viaProxy(t, storagetest.DSN(t, storage.Postgres))
	s := start(t, options{dialect: storage.Postgres, dsn: dsn})
	_, key := s.account("pro")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "survivor"})

	p.cut()
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/hostnames", map[string]any{"ip": "198.41.0.5"}},
		{"PUT", "/api/v1/hostnames/" + h.str("id"), map[string]any{"ip": "198.41.0.6"}},
		{"GET", "/api/v1/hostnames", nil},
		{"POST", "/api/admin/accounts", map[string]any{"name": "x", "plan": "free"}},
	} {
		t0 := time.Now()
		tok := key
		if req.path == "/api/admin/accounts" {
			tok = s.admin
		}
		r := s.do(req.method, req.path, tok, req.body)
		if r.status != 503 || r.str("code") != "SERVICE_UNAVAILABLE" {
			t.Errorf("%s %s during the outage: %d %s", req.method, req.path, r.status, r.raw)
		}
		if d := time.Since(t0); d > 11*time.Second {
			t.Errorf("%s %s took %v", req.method, req.path, d)
		}
	}
	if r := s.do("GET", "/api/health", "", nil); r.status != 503 {
		t.Errorf("health during the outage: %d %s", r.status, r.raw)
	}
	s.resolves("survivor.example.org", dns.TypeA, "198.41.0.4")

	p.restore(t)
	eventually(t, 15*time.Second, func() bool { return s.do("GET", "/api/health", "", nil).status == 200 }, "health did not recover")
	s.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.7"})
	s.resolves("survivor.example.org", dns.TypeA, "198.41.0.7")
	if l := s.must(200, "GET", "/api/v1/hostnames", key, nil); len(l.body["hostnames"].([]any)) != 1 {
		t.Fatalf("a refused write left something behind: %s", l.raw)
	}
}

// A database that goes silent (a frozen host: connections open, nothing
// answered) must not hang the API: requests answer 503 within the store's
// stall bound, health within its own 2 s, DNS keeps answering, and all of
// it resumes when the database speaks again.
func TestDatabaseSilent(t *testing.T) {
	t.Parallel()
	dsn, p := viaProxy(t, storagetest.DSN(t, storage.Postgres))
	s := start(t, options{dialect: storage.Postgres, dsn: dsn})
	_, key := s.account("pro")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "frozen"})

	p.silence()
	t0 := time.Now()
	if r := s.do("GET", "/api/health", "", nil); r.status != 503 || time.Since(t0) > 4*time.Second {
		t.Errorf("health with a silent database: %d after %v: %s", r.status, time.Since(t0), r.raw)
	}
	for _, body := range []map[string]any{{"ip": "198.41.0.5"}, {"ip": "198.41.0.6"}} {
		t0 := time.Now()
		r := s.do("PUT", "/api/v1/hostnames/"+h.str("id"), key, body)
		if r.status != 503 || r.str("code") != "SERVICE_UNAVAILABLE" || time.Since(t0) > 9*time.Second {
			t.Errorf("update with a silent database: %d after %v: %s", r.status, time.Since(t0), r.raw)
		}
	}
	s.resolves("frozen.example.org", dns.TypeA, "198.41.0.4")

	p.restore(t)
	eventually(t, 15*time.Second, func() bool { return s.do("GET", "/api/health", "", nil).status == 200 }, "health did not recover")
	s.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.7"})
	s.resolves("frozen.example.org", dns.TypeA, "198.41.0.7")
}
