package udpbatch

import (
	"net"
	"sync"
	"time"
)

// queue is the net.PacketConn the full server reads: the datagrams the
// batch reader could not answer, as they came; its answers go out on the
// real socket.
type queue struct {
	c    *net.UDPConn
	in   chan datagram
	once sync.Once
}

type datagram struct {
	b    []byte
	addr *net.UDPAddr
}

// queued bounds the datagrams waiting for the full server (it starts a
// goroutine for each as soon as it reads it, so they wait only for that):
// past it they are dropped, as a full socket buffer drops them.
const queued = 1024

func newQueue(c *net.UDPConn) *queue { return &queue{c: c, in: make(chan datagram, queued)} }

// put queues a copy of b, from addr; dropped when the queue is full.
func (q *queue) put(b []byte, addr *net.UDPAddr) {
	select {
	case q.in <- datagram{b: append([]byte(nil), b...), addr: addr}:
	default:
	}
}

func (q *queue) close() { q.once.Do(func() { close(q.in) }) }

func (q *queue) ReadFrom(b []byte) (int, net.Addr, error) {
	d, ok := <-q.in
	if !ok {
		return 0, nil, net.ErrClosed
	}
	return copy(b, d.b), d.addr, nil
}

func (q *queue) WriteTo(b []byte, addr net.Addr) (int, error) { return q.c.WriteTo(b, addr) }

// Close is the full server's shutdown; the reader closes the queue.
func (q *queue) Close() error                     { return nil }
func (q *queue) LocalAddr() net.Addr              { return q.c.LocalAddr() }
func (q *queue) SetDeadline(time.Time) error      { return nil }
func (q *queue) SetReadDeadline(time.Time) error  { return nil }
func (q *queue) SetWriteDeadline(time.Time) error { return nil }
