package adminapi

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The API's connections are bounded: an idle keep-alive connection is
// closed after IdleTimeout, one address holds at most ConnLimits.PerAddr
// open at once, and all of them together at most ConnLimits.Total, which
// stays well under the process's file limit, so that a flood of idle
// connections from one address leaves file descriptors (and memory) for
// other API clients and for DNS over TCP.

// IdleTimeout is how long the API keeps an idle keep-alive connection.
const IdleTimeout = 10 * time.Second

// ConnLimits bound a listener's connections.
type ConnLimits struct {
	PerAddr int // open connections from one address
	Total   int // open connections in all
	// Exempt are addresses counted in Total only: the trusted proxies,
	// through which many clients come.
	Exempt []netip.Prefix
	// Refused hears of each connection closed at once, by reason
	// ("address" or "total"); nil for none.
	Refused func(reason string)
}

// DefaultConnLimits are the limits of the API's listener: 256 from an
// address, 4 096 in all, or a quarter of the file limit when that is less.
func DefaultConnLimits() ConnLimits {
	total := 4096
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur/4 < uint64(total) {
		total = max(16, int(rl.Cur/4))
	}
	return ConnLimits{PerAddr: min(256, total), Total: total}
}

// LimitConns applies l to ln's connections: one over a limit is answered
// 503 (when it reads its answer within a second) and closed.
func LimitConns(ln net.Listener, l ConnLimits) net.Listener {
	return &limitListener{Listener: ln, l: l, byAddr: map[netip.Addr]int{}, refusing: make(chan struct{}, 64)}
}

type limitListener struct {
	net.Listener
	l        ConnLimits
	mu       sync.Mutex
	total    int
	byAddr   map[netip.Addr]int
	refusing chan struct{} // bounds the refusals being written
}

func (ln *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteAddr(c)
		if reason := ln.take(addr); reason != "" {
			ln.refuse(c, reason)
			continue
		}
		return &limitedConn{Conn: c, release: func() { ln.give(addr) }}, nil
	}
}

// remoteAddr is what c's connections are counted under: its IPv4
// address, or its IPv6 /64 (one host holds a whole /64, and would get a
// fresh allowance for each address of it otherwise).
func remoteAddr(c net.Conn) netip.Addr {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}

// take counts a connection from addr in, or says which limit it is over.
func (ln *limitListener) take(addr netip.Addr) string {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.total >= ln.l.Total {
		return "total"
	}
	exempt := false
	for _, p := range ln.l.Exempt {
		exempt = exempt || p.Contains(addr) // a /64 counted by its first address: exempt as a whole
	}
	if !exempt {
		if ln.byAddr[addr] >= ln.l.PerAddr {
			return "address"
		}
		ln.byAddr[addr]++
	}
	ln.total++
	return ""
}

func (ln *limitListener) give(addr netip.Addr) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.total--
	if n := ln.byAddr[addr]; n > 1 {
		ln.byAddr[addr] = n - 1
	} else {
		delete(ln.byAddr, addr)
	}
}

// tooMany is the answer of a connection over a limit, in the API's shape.
var tooMany = func() []byte {
	body := `{"error":"too many connections from this address or in all; close idle ones and try again","code":"SERVICE_UNAVAILABLE"}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// refuse answers c 503 and closes it, without holding up Accept: at most
// 64 answers are written at once, and the connections beyond are closed
// without one.
func (ln *limitListener) refuse(c net.Conn, reason string) {
	if ln.l.Refused != nil {
		ln.l.Refused(reason)
	}
	select {
	case ln.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-ln.refusing }()
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(tooMany)
		c.Close()
	}()
}

// limitedConn gives its place back once, when it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// CloseWrite passes a half-close through (see rejectConn).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
