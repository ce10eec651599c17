package hostname

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/plugin/hostname/udpbatch"
	"github.com/miekg/dns"
)

// fast_udp: the server block's UDP address is also served by sockets of
// the plugin's own (udpbatch), which answer a name's query from its
// packed answer (wire.go) without the framework's per-query work, and give
// every other query to the CoreDNS server as it came. It starts with the
// first query the server routes here: that query's context is how the
// plugin learns its server.
type fastUDP struct {
	sockets int // 0: one per CPU
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

// passesQueries are the plugins that may come before this one without
// being bypassed by an answer from bytes: they never act on a plain IN
// query without EDNS options or TSIG of a type fromBytes takes, the only
// kind answered so (transfer takes AXFR and IXFR, chaos the CH class, nsid
// an NSID option, any the type ANY, errors what a plugin returns, this
// plugin's key gate a signed message).
// prometheus is let through too: its per-request counters miss answers
// from bytes, which the README says; the plugin's own count them all.
var passesQueries = []string{"transfer", "chaos", "nsid", "any", "errors", "cancel", "prometheus", keyGateName}

// fastBlocker is the first plugin of conf's chain, before this one, that an
// answer from bytes would bypass; "" when there is none.
func fastBlocker(conf *dnsserver.Config) string {
	mine := slices.Index(dnsserver.Directives, "hostname")
	var blocking []string
	for _, ph := range conf.Handlers() {
		name := ph.Name()
		switch i := slices.Index(dnsserver.Directives, name); {
		case name == "hostname", i > mine, slices.Contains(passesQueries, name):
		case name == "tsig" && !tsigRequires(ph):
		default:
			blocking = append(blocking, name)
		}
	}
	slices.Sort(blocking)
	if len(blocking) == 0 {
		return ""
	}
	return blocking[0]
}

// on reports whether fast_udp is set and the block may have it.
func (f *fastUDP) on() bool { return f != nil && f.checked.Load() && f.blocked == "" }

// startFast opens the fast sockets for the server that routed the query
// of ctx, once per server address.
func (h *Handler) startFast(ctx context.Context) {
	f := h.fast
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
	opcodes, ok := serverOpcodes(srv)
	if !ok {
		log.Warningf("fast_udp: not on %s: this CoreDNS's server does not say which opcodes it accepts", addr)
		return
	}
	addrs, alone, err := fastAddrs(addr, net.InterfaceAddrs)
	if err != nil {
		log.Warningf("fast_udp: not on %s: %v", addr, err)
		return
	}
	cfg := udpbatch.Config{
		Sockets: f.sockets, Before: max(h.cfg.numSockets, 1), Answer: &fastAnswerer{h: h, routes: serverRoutes(srv, h)},
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

// serverRoutes are srv's zone keys, each true when the block srv gives its
// names to (the first of the key's: views, which could pick another, are
// not in this build) is h's, whichever of its keys it is. nil when the
// server's blocks cannot be read (internals.go): no answer is then given
// for a name not known to be routed here.
func serverRoutes(srv *dnsserver.Server, h *Handler) map[string]bool {
	blocks, ok := serverBlocks(srv)
	if !ok {
		return nil
	}
	routes := make(map[string]bool, len(blocks))
	for key, conf := range blocks {
		routes[key] = conf.Handler("hostname") == plugin.Handler(h)
	}
	return routes
}

// stopFast closes the fast sockets, for good or (a reload) until
// reopenFast.
func (h *Handler) stopFast() {
	f := h.fast
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

// reopenFast lets the fast sockets open again with the next query, after a
// reload that failed: this instance goes on serving.
func (h *Handler) reopenFast() {
	f := h.fast
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
