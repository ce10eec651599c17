//go:build unix

package pgwire

import (
	"errors"
	"syscall"
)

// gone reports a connection its server closed, or wrote to, while it sat
// idle in the pool (a restart, pg_terminate_backend, an idle timeout): an
// idle connection has nothing to read. It looks without reading.
func (c *stallConn) gone() bool {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var b [1]byte
	raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK)
		return true
	})
	return gone
}
