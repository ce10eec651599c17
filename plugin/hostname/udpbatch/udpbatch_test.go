package udpbatch

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// byID answers even IDs from bytes (an A record's question echoed with
// rcode NOERROR), drops IDs ending in 1 and leaves the rest to the full
// server.
type byID struct{}

func (byID) Answer(buf, q []byte, _ netip.AddrPort) ([]byte, bool) {
	switch id := uint16(q[0])<<8 | uint16(q[1]); {
	case id%2 == 0:
		b := append(buf, q...)
		b[2] |= 0x80
		return b, false
	case id%10 == 1:
		return nil, true
	}
	return nil, false
}

// The sockets take the address's datagrams from the server's own, answer
// what the Answerer answers, drop what it drops, and give the rest to the
// full handler with TSIG checked as the server checks it.
func TestListen(t *testing.T) {
	t.Parallel()
	for _, local := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(local, func(t *testing.T) { testListen(t, local) })
	}
}

func testListen(t *testing.T, local string) {
	t.Parallel()
	// The server's own socket, bound first, as CoreDNS's is.
	lc := net.ListenConfig{Control: reusePort}
	own, err := lc.ListenPacket(context.Background(), "udp", local)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	addr := own.LocalAddr().String()
	secret := map[string]string{"k.": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}
	full := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if r.IsTsig() != nil {
			if w.TsigStatus() != nil {
				m.Rcode = dns.RcodeNotAuth
			}
			m.SetTsig("k.", dns.HmacSHA256, 300, time.Now().Unix())
		}
		m.Authoritative = true // the full server's mark
		w.WriteMsg(m)
	})
	s, err := Listen(Config{Addr: addr, Sockets: 2, Before: 1, Answer: byID{}, Full: full, TsigSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond, TsigSecret: secret}
	for _, tc := range []struct {
		id     uint16
		tsig   bool
		answer bool
		full   bool
	}{
		{id: 2, answer: true}, {id: 4, answer: true},
		{id: 3, answer: true, full: true}, {id: 5, answer: true, full: true, tsig: true},
		{id: 11},
	} {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeA)
		m.Id = tc.id
		if tc.tsig {
			m.SetTsig("k.", dns.HmacSHA256, 300, time.Now().Unix())
		}
		r, _, err := c.Exchange(m, addr)
		if !tc.answer {
			if err == nil {
				t.Errorf("id %d: answered %v, want dropped", tc.id, r)
			}
			continue
		}
		if err != nil {
			t.Fatalf("id %d: %v", tc.id, err)
		}
		if r.Id != tc.id || r.Authoritative != tc.full || r.Rcode != dns.RcodeSuccess {
			t.Errorf("id %d: answer %v; want it from the full server: %v", tc.id, r, tc.full)
		}
	}
	// Nothing reached the server's own socket: the filter gives the
	// datagrams to the sockets after it.
	own.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, _, err := own.ReadFrom(make([]byte, 512)); err == nil {
		t.Error("the server's own socket got a datagram")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestListenNeedsAnAddress(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{":53", "0.0.0.0:53", "[::]:53", "127.0.0.1:0", "localhost:53"} {
		if _, err := Listen(Config{Addr: addr, Answer: byID{}, Full: dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {})}); err == nil {
			t.Errorf("Listen(%q) did", addr)
		}
	}
}
