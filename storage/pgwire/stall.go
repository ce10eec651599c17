package pgwire

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// StallTimeout bounds how long a PostgreSQL connection may wait for the
// server's next bytes once the store is open. lib/pq answers a cancelled
// context by asking the server to cancel the statement and then waits for
// the reply as long as it takes, so a database that goes silent (a frozen
// host, a path that drops packets) would hang every request for good. No
// statement of the service waits this long for its answer; migrations,
// which may, run before it applies.
const StallTimeout = 5 * time.Second

// stallDialer makes lib/pq connections whose reads give up after the
// dialer's timeout (none while it is 0).
type stallDialer struct {
	d       net.Dialer
	timeout *atomic.Int64 // nanoseconds; 0: reads wait as long as it takes
}

func (d stallDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d stallDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, addr)
}

func (d stallDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc := &stallConn{Conn: c, timeout: d.timeout}
	if slot, _ := ctx.Value(dialed{}).(*dialed); slot != nil {
		slot.c = sc
	}
	return sc, nil
}

// dialed, in the context a connection is opened with, learns its socket.
type dialed struct{ c *stallConn }

// stallConn sets a read deadline before each read: a pooled connection
// reads only while a statement waits for its answer, so an idle one is
// never cut, and a silent server fails the statement (and the connection)
// instead of holding it.
type stallConn struct {
	net.Conn
	timeout *atomic.Int64
}

func (c *stallConn) Read(b []byte) (int, error) {
	if t := time.Duration(c.timeout.Load()); t > 0 {
		c.Conn.SetReadDeadline(time.Now().Add(t))
	}
	return c.Conn.Read(b)
}
