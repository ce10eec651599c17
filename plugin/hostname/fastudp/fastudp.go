// Package fastudp serves a CoreDNS server block's UDP address also from
// sockets of the hostname plugin's own (udpbatch), which give each plain
// query of a name the plugin answers there to the plugin's answerer,
// without the framework's per-query work, and every other query to the
// CoreDNS server as it came. It starts with the first query the server
// routes to the block: that query's context is how it learns its server.
package fastudp

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/plugin/hostname/coreinternals"
	"github.com/hostmint/hostmint/plugin/hostname/udpbatch"
	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin("hostname")

// Answerer is the plugin's side: its answers.
type Answerer interface {
	// Answer appends to buf the answer to q, from client, when the plugin
	// answers q's name here: its zone (the most specific the plugin
	// serves) is one that mine says the server gives to this block. ok is
	// false when it does not (the server answers q); the answer is nil
	// with ok when response_rate_limit drops it.
	Answer(buf []byte, q Query, client netip.Addr, mine func(zone string) bool) (answer []byte, ok bool)
}

// Fast is one server block's fast_udp.
type Fast struct {
	sockets int // 0: one per CPU
	answer  Answerer
	self    plugin.Handler // the plugin's handler: its blocks are those whose chain holds it
	passes  []string       // plugins that may come before it (Blocker)
	before  int            // the server's own sockets on its address (multisocket)
	// blocked names the plugin before this one that must see every
	// query (log, acl, ...): then the block has no fast path. Set at
	// start-up, when the block's plugins exist; checked says it is.
	blocked string
	checked atomic.Bool

	mu      sync.Mutex
	seen    sync.Map                      // *dnsserver.Server -> struct{}: started, or never to be
	servers map[string][]*udpbatch.Server // by the server's address
	closed  bool
}

// New is fast_udp with sockets per address (0: one per CPU), answered by
// a for the plugin self; passes are the plugins of its own that come
// before it and never act on a plain query (its key gate).
func New(sockets int, a Answerer, self plugin.Handler, passes ...string) *Fast {
	return &Fast{sockets: sockets, answer: a, self: self, passes: passes, servers: map[string][]*udpbatch.Server{}}
}

// passesQueries are the plugins that may come before the plugin without
// being bypassed by an answer from the fast path: they never act on a
// plain IN query without EDNS options or TSIG of a type Answer is asked
// (transfer takes AXFR and IXFR, chaos the CH class, nsid an NSID option,
// any the type ANY, errors what a plugin returns). prometheus is let
// through too: its per-request counters miss these answers, which the
// README says; the plugin's own count them all.
var passesQueries = []string{"transfer", "chaos", "nsid", "any", "errors", "cancel", "prometheus"}

// Check reads the block's chain at start-up: the block has no fast path
// when a plugin before this one must see every query. It says which
// ("" for none).
func (f *Fast) Check(conf *dnsserver.Config) string {
	f.before = conf.NumSockets
	f.blocked = f.blocker(conf)
	f.checked.Store(true)
	return f.blocked
}

// blocker is the first plugin of conf's chain, before the plugin, that an
// answer from the fast path would bypass; "" when there is none.
func (f *Fast) blocker(conf *dnsserver.Config) string {
	name := f.self.Name()
	mine := slices.Index(dnsserver.Directives, name)
	var blocking []string
	for _, ph := range conf.Handlers() {
		n := ph.Name()
		switch i := slices.Index(dnsserver.Directives, n); {
		case n == name, i > mine, slices.Contains(passesQueries, n), slices.Contains(f.passes, n):
		case n == "tsig" && !coreinternals.TSIGRequires(ph):
		default:
			blocking = append(blocking, n)
		}
	}
	slices.Sort(blocking)
	if len(blocking) == 0 {
		return ""
	}
	return blocking[0]
}

// Start opens the fast sockets for the server that routed the query of
// ctx, once per server address.
func (f *Fast) Start(ctx context.Context) {
	srv, ok := ctx.Value(dnsserver.Key{}).(*dnsserver.Server)
	if !ok || !f.checked.Load() {
		return
	}
	if _, seen := f.seen.Load(srv); seen {
		return
	}
	if _, loaded := f.seen.LoadOrStore(srv, struct{}{}); loaded || f.blocked != "" {
		return
	}
	addr, ok := strings.CutPrefix(srv.Addr, "dns://")
	if !ok {
		return // DNS over TLS, HTTPS, ...: not UDP
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.servers[addr] != nil {
		return
	}
	opcodes, ok := coreinternals.ServerOpcodes(srv)
	if !ok {
		log.Warningf("fast_udp: not on %s: this CoreDNS's server does not say which opcodes it accepts", addr)
		return
	}
	addrs, alone, err := listenAddrs(addr, net.InterfaceAddrs)
	if err != nil {
		log.Warningf("fast_udp: not on %s: %v", addr, err)
		return
	}
	cfg := udpbatch.Config{
		Sockets: f.sockets, Before: max(f.before, 1), Answer: Answering(f.answer, f.routes(srv)),
		Full: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			// As CoreDNS's UDP server calls it.
			ctx := context.WithValue(context.Background(), dnsserver.Key{}, srv)
			srv.ServeDNS(context.WithValue(ctx, dnsserver.LoopKey{}, 0), w, r)
		}),
		TsigSecret: srv.TsigSecret, MsgAcceptFunc: acceptMessage(opcodes),
	}
	if alone {
		cfg.Before = 0
	}
	var on []string
	for _, a := range addrs {
		cfg.Addr = a
		s, err := udpbatch.Listen(cfg)
		if err != nil {
			log.Warningf("fast_udp: not on %s: %v", a, err)
			continue
		}
		f.servers[addr] = append(f.servers[addr], s)
		on = append(on, a)
	}
	switch {
	case len(on) == 0:
	case alone:
		log.Infof("fast_udp: %s answered from batches of datagrams on %s", addr, strings.Join(on, ", "))
	default:
		log.Infof("fast_udp: %s answered from batches of datagrams", addr)
	}
}

// routes are srv's zone keys, each true when the block srv gives its
// names to (the first of the key's: views, which could pick another, are
// not in this build) is the plugin's, whichever of its keys it is. nil
// when the server's blocks cannot be read (coreinternals): no answer is
// then given for a name not known to be routed here.
func (f *Fast) routes(srv *dnsserver.Server) map[string]bool {
	blocks, ok := coreinternals.ServerBlocks(srv)
	if !ok {
		return nil
	}
	routes := make(map[string]bool, len(blocks))
	for key, conf := range blocks {
		routes[key] = conf.Handler(f.self.Name()) == f.self
	}
	return routes
}

// Stop closes the fast sockets, for good or (a reload) until Reopen.
func (f *Fast) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, ss := range f.servers {
		for _, s := range ss {
			s.Close()
		}
	}
	f.servers = map[string][]*udpbatch.Server{}
}

// Reopen lets the fast sockets open again with the next query, after a
// reload that failed: this instance goes on serving.
func (f *Fast) Reopen() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = false
	f.seen.Clear()
}

// acceptMessage is a server's acceptance, as CoreDNS's server has it:
// miekg's default, and the opcodes its blocks allowed.
func acceptMessage(opcodes map[int]bool) dns.MsgAcceptFunc {
	return func(dh dns.Header) dns.MsgAcceptAction {
		action := dns.DefaultMsgAcceptFunc(dh)
		if action != dns.MsgRejectNotImplemented || !opcodes[int(dh.Bits>>11)&0xF] {
			return action
		}
		if dh.Qdcount != 1 {
			return dns.MsgReject
		}
		return dns.MsgAccept
	}
}
