package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Idle API connections are bounded: 3 000 keep-alive connections from
// one address get 256 served and the rest a 503 and a close, a client at
// another address and DNS over TCP are served within a second meanwhile,
// and an idle connection is closed after seconds, not minutes.
func TestIdleConnectionsBounded(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	api := strings.TrimPrefix(s.api, "http://")
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	served, refused := 0, 0
	for range 3000 {
		c, err := net.Dial("tcp", api)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		open = append(open, c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		switch {
		case err != nil:
			refused++ // closed without an answer: the refusals' writers were busy
		case resp.StatusCode == 200:
			served++
		case resp.StatusCode == 503:
			refused++
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if served != 256 || refused != 3000-256 {
		t.Errorf("%d connections served and %d refused, want 256 and %d", served, refused, 3000-256)
	}

	// Another address: 127.0.0.2 is this machine too.
	other := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	began := time.Now()
	resp, err := other.Get(s.api + "/api/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a client at another address: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(func() *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeSOA)
		return m
	}(), s.dnsAddr); err != nil {
		t.Fatalf("DNS over TCP: %v", err)
	}
	t.Logf("another client and DNS over TCP served in %v beside 3 000 connections", time.Since(began).Round(time.Millisecond))

	// An idle keep-alive connection is closed by the server within seconds.
	idle := open[0]
	idle.SetReadDeadline(time.Now().Add(15 * time.Second))
	began = time.Now()
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("an idle connection: %v after %v, want EOF", err, time.Since(began))
	}
}
