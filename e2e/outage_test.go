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
// for whoever connects through it (connections are reset, new ones refused).
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection through it.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// restore listens again on the same address.
func (p *proxy) restore(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

// With the database unreachable, DNS keeps answering from the index, the API
// answers 503 SERVICE_UNAVAILABLE promptly, health says so; when it returns,
// everything resumes.
func TestDatabaseOutage(t *testing.T) {
	dsn := storagetest.DSN(t, storage.Postgres)
	u, _ := url.Parse(dsn)
	p := newProxy(t, u.Host)
	u.Host = p.addr
	s := start(t, options{dialect: storage.Postgres, dsn: u.String()})
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
