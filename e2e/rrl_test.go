package e2e

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// udpFrom is a UDP socket at local (an address of this machine).
func udpFrom(t *testing.T, local string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(local)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// exchangeFrom asks server name's A from c and returns the answer, nil
// when none came within a second.
func exchangeFrom(c *net.UDPConn, server *net.UDPAddr, name string, id uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.Id = id
	b, _ := m.Pack()
	c.WriteToUDP(b, server)
	buf := make([]byte, 1500)
	c.SetReadDeadline(time.Now().Add(time.Second))
	for {
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			return nil
		}
		r := new(dns.Msg)
		if r.Unpack(buf[:n]) == nil && r.Id == id {
			return r
		}
	}
}

// Response rate limiting counts per network and response, as BIND's and
// Knot's RRL: a socket flooding random NXDOMAIN names at 100 q/s from a
// network leaves a resolver in the same /24 every answer it asks for,
// whole; a flood of names outside every zone (REFUSED) is limited too.
func TestRRLPerResponse(t *testing.T) {
	t.Parallel()
	s := start(t, options{extra: []string{"response_rate_limit 5 2"}})
	_, key := s.account("pro")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("hostname")
	server, _ := net.ResolveUDPAddr("udp", s.dnsAddr)

	flood := udpFrom(t, "127.0.0.1")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond): // 100 q/s
			}
			m := new(dns.Msg)
			m.SetQuestion(fmt.Sprintf("r%d-%d.example.org.", i, time.Now().UnixNano()), dns.TypeA)
			b, _ := m.Pack()
			flood.WriteToUDP(b, server)
		}
	})
	resolver := udpFrom(t, "127.0.0.2") // the same /24
	whole := 0
	for i := range 7 {
		time.Sleep(150 * time.Millisecond)
		if r := exchangeFrom(resolver, server, name, uint16(100+i)); r != nil && !r.Truncated && len(addrs(r)) == 1 {
			whole++
		}
	}
	close(stop)
	wg.Wait()
	if whole != 7 {
		t.Errorf("the resolver got %d of its 7 answers whole beside an NXDOMAIN flood from its network", whole)
	}

	// REFUSED, 40 at once from one socket: the errors' allowance (5) and
	// every second one past it truncated; the rest dropped.
	refusing := udpFrom(t, "127.0.0.3")
	for i := range 40 {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("n%d.elsewhere.test.", i), dns.TypeA)
		m.Id = uint16(1000 + i)
		b, _ := m.Pack()
		refusing.WriteToUDP(b, server)
	}
	refused, truncated := 0, 0
	refusing.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 1500)
	for {
		n, _, err := refusing.ReadFromUDP(buf)
		if err != nil {
			break
		}
		r := new(dns.Msg)
		if r.Unpack(buf[:n]) != nil {
			continue
		}
		if r.Truncated {
			truncated++
		} else if r.Rcode == dns.RcodeRefused {
			refused++
		}
	}
	if refused > 7 || truncated < 10 {
		t.Errorf("a REFUSED flood of 40: %d refused whole and %d truncated, want about 5 and 17", refused, truncated)
	}
}
