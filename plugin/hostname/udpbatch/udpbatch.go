// Package udpbatch serves DNS over UDP on sockets of its own, opened
// beside a CoreDNS server's on the same address (SO_REUSEPORT) and given
// the address's datagrams by a socket filter. Each socket is read and
// written in batches (recvmmsg, sendmmsg) by one goroutine, which answers
// what it can from bytes alone and hands the rest, as they came, to a
// miekg/dns server of its own whose handler is the CoreDNS server's: the
// same acceptance, TSIG checks and plugins as on CoreDNS's own socket.
//
// Why: per query, CoreDNS's UDP path costs a goroutine, a recvmsg, a full
// unpack and a sendmsg; on loopback the two system calls are half of the
// server's CPU. A batch shares its system calls and an answer from bytes
// skips the rest.
package udpbatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/bpf"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// Answerer answers queries from their bytes.
type Answerer interface {
	// Answer appends to buf the answer to query, which came from client,
	// and returns it; nil when only the full server can answer it. drop
	// is true when the query is to get no answer at all.
	Answer(buf, query []byte, client netip.AddrPort) (answer []byte, drop bool)
}

// Config is what Listen needs.
type Config struct {
	// Addr is the server's address, IP:PORT: a specific IP (a wildcard
	// socket would answer from whatever source the route picks).
	Addr string
	// Sockets to open (0: one per CPU Go uses).
	Sockets int
	// Before is how many sockets the server itself has on Addr (its
	// multisocket count; 0 when its sockets are on a wildcard address):
	// the filter gives the datagrams to the sockets after those.
	Before int
	// Answer answers from bytes; Full every query it does not, as the
	// server would (its ServeDNS with its context).
	Answer Answerer
	Full   dns.Handler
	// TsigSecret and MsgAcceptFunc are the server's.
	TsigSecret    map[string]string
	MsgAcceptFunc dns.MsgAcceptFunc
}

// batch is how many datagrams one system call reads or writes at most.
const batch = 32

// readSize bounds a query read, and an answer from bytes.
const readSize = 4096

// Server is the sockets Listen opened.
type Server struct {
	conns []*net.UDPConn
	full  []*dns.Server
	wg    sync.WaitGroup
}

// Listen opens cfg.Sockets sockets on cfg.Addr and serves them until
// Close.
func Listen(cfg Config) (*Server, error) {
	ap, err := netip.ParseAddrPort(cfg.Addr)
	if err != nil || ap.Addr().IsUnspecified() || ap.Port() == 0 {
		return nil, fmt.Errorf("it needs a specific address and port (give the block a bind address), got %q", cfg.Addr)
	}
	n := cfg.Sockets
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	s := &Server{}
	lc := net.ListenConfig{Control: reusePort}
	for range n {
		pc, err := lc.ListenPacket(context.Background(), "udp", cfg.Addr)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.conns = append(s.conns, pc.(*net.UDPConn))
	}
	if err := steer(s.conns[0], cfg.Before, n); err != nil {
		s.Close()
		return nil, fmt.Errorf("socket filter: %w", err)
	}
	for _, c := range s.conns {
		q := newQueue(c)
		// miekg's default read size, as CoreDNS's server has it: a query
		// is read as on the server's own socket.
		srv := &dns.Server{PacketConn: q, Net: "udp", Handler: cfg.Full,
			TsigSecret: cfg.TsigSecret, MsgAcceptFunc: cfg.MsgAcceptFunc}
		s.full = append(s.full, srv)
		s.wg.Add(2)
		go func() { defer s.wg.Done(); srv.ActivateAndServe() }()
		go func() { defer s.wg.Done(); serve(c, cfg.Answer, q) }()
	}
	return s, nil
}

// shutdownTimeout bounds how long Close waits for the full server's
// queries in flight, as CoreDNS bounds its own servers' shutdown.
const shutdownTimeout = 5 * time.Second

// Close takes the filter off the address's sockets (the server's own get
// its datagrams again), closes the sockets and waits for their goroutines.
func (s *Server) Close() error {
	if len(s.conns) > 0 {
		if raw, err := s.conns[0].SyscallConn(); err == nil {
			raw.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DETACH_REUSEPORT_BPF, 0) })
		}
	}
	for _, c := range s.conns {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, f := range s.full {
		f.ShutdownContext(ctx)
	}
	s.wg.Wait()
	return nil
}

func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return serr
}

// steer attaches to the address's socket group a filter that gives each
// datagram to one of the n sockets after the server's first before, at
// random: by flow or by the receiving CPU, one busy client (dnsperf, a
// large resolver) would keep one socket's goroutine busy and leave the
// others idle, and UDP answers have no order to keep. Sockets join a group
// in the order they bind, and an index past its end falls back to the
// kernel's hash: a wrong guess of before costs speed, never an answer.
func steer(c *net.UDPConn, before, n int) error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtRand},
		bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(n)},
		bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: uint32(before)},
		bpf.RetA{},
	})
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF,
			&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
	})
	return errors.Join(err, serr)
}

// serve reads c in batches until it is closed, answers what a can and
// queues the rest for the full server.
func serve(c *net.UDPConn, a Answerer, full *queue) {
	defer full.close()
	pc := ipv4.NewPacketConn(c) // its batches are the socket's, whatever its family
	in := make([]ipv4.Message, batch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, readSize)}
	}
	out := make([]ipv4.Message, batch)
	bufs := make([][]byte, batch)
	for i := range out {
		bufs[i] = make([]byte, 0, readSize)
		out[i].Buffers = [][]byte{nil}
	}
	for {
		n, err := pc.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		k := 0
		for _, m := range in[:n] {
			ua, ok := m.Addr.(*net.UDPAddr)
			if !ok || ua.Port == 0 {
				continue // no answer can reach port 0
			}
			q := m.Buffers[0][:m.N]
			ans, drop := answer(a, bufs[k][:0], q, ua.AddrPort())
			switch {
			case ans != nil:
				out[k].Buffers[0], out[k].Addr = ans, ua
				k++
			case !drop:
				full.put(q, ua)
			}
		}
		for sent := 0; sent < k; {
			w, err := pc.WriteBatch(out[sent:k], 0)
			sent += w
			if err != nil {
				sent++ // that one is lost, as a sendmsg that fails; not the rest
			}
		}
	}
}

// answer is a.Answer, and nil (the full server's to answer, which
// recovers as CoreDNS does) when it panics: one query never stops the
// socket.
func answer(a Answerer, buf, q []byte, client netip.AddrPort) (ans []byte, drop bool) {
	defer func() {
		if recover() != nil {
			ans, drop = nil, false
		}
	}()
	return a.Answer(buf, q, client)
}
