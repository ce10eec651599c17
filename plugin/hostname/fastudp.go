package hostname

import (
	"context"
	"encoding/binary"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
	seen    sync.Map // *dnsserver.Server -> struct{}: started, or never to be
	servers map[string]*udpbatch.Server
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
	s, err := udpbatch.Listen(udpbatch.Config{
		Addr: addr, Sockets: f.sockets, Before: h.cfg.numSockets, Answer: &fastAnswerer{h: h, routes: serverRoutes(srv, h)},
		Full: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			// As CoreDNS's UDP server calls it.
			ctx := context.WithValue(context.Background(), dnsserver.Key{}, srv)
			srv.ServeDNS(context.WithValue(ctx, dnsserver.LoopKey{}, 0), w, r)
		}),
		TsigSecret: srv.TsigSecret, MsgAcceptFunc: acceptMessage(opcodes),
	})
	if err != nil {
		log.Warningf("fast_udp: not on %s: %v", addr, err)
		return
	}
	f.servers[addr] = s
	log.Infof("fast_udp: %s answered from batches of datagrams", addr)
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
	for _, s := range f.servers {
		s.Close()
	}
	f.servers = map[string]*udpbatch.Server{}
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

// fastAnswerer answers queries from names' packed answers, for one
// server: routes are its zone keys, true where this block is the one the
// server gives the key's names to.
type fastAnswerer struct {
	h      *Handler
	routes map[string]bool
	ours   sync.Map // zone name -> bool: the server gives every name of the zone here
	// missing holds the zones' NXDOMAIN answers: missingKey -> *missingWire.
	missing sync.Map
}

// Answer implements udpbatch.Answerer: the answer ServeDNS would send, for
// a name whose answer is kept as bytes (serveWire), a name that does not
// exist (the zone's NXDOMAIN, or with DO in a signed zone the denial kept
// for it); nil for every other query, which the CoreDNS server answers.
func (a *fastAnswerer) Answer(buf, q []byte, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	var nb [256]byte
	p, ok := parseQuery(q, &nb)
	if !ok || !h.index.Loaded() {
		return nil, false
	}
	qname := unsafe.String(&nb[0], p.nameLen) // looked up, never kept
	z := h.index.zoneOf(qname)
	if z == nil || z.unservable() || qname == z.name || !fromBytes(p.qtype, z) || !a.routed(z) {
		return nil, false
	}
	n := z.names.get(qname)
	if n == nil {
		return a.answerMissing(buf, q, p, qname, z, client)
	}
	e := h.wire.get(n, z, p.qtype, p.flags, time.Now().UnixMilli())
	if e == nil || len(e.msg) > min(p.size, maxUDPSize) {
		return nil, false
	}
	return a.respond(buf, q, p, client, rrlAnswer, qname, dns.RcodeSuccess, z.kind, e.msg)
}

// respond sends the answer made of parts, with rcode, to the query q:
// rate limited as class and name, counted, and with the query's ID, RD and
// CD bits and the case of its name.
func (a *fastAnswerer) respond(buf, q []byte, p query, client netip.AddrPort, class int, name string, rcode int, kind string, parts ...[]byte) ([]byte, bool) {
	qtype := p.qtype
	if class == rrlNXDomain {
		qtype = 0
	}
	if drop, slip := a.limited(client, class, name, qtype); drop {
		return nil, true
	} else if slip {
		return slipped(buf, q, p, rcode), false
	}
	countAnswer(rcode, p.qtype, kind)
	b := buf
	for _, part := range parts {
		b = append(b, part...)
	}
	b[0], b[1] = q[0], q[1]
	b[2] |= q[2] & 0x01              // RD
	b[3] |= q[3] & 0x10              // CD
	copy(b[12:], q[12:12+p.wireLen]) // the question's case
	return b, false
}

// fromBytes reports whether a query of qtype in z may be answered from
// bytes: not the types ServeDNS (or a plugin before it) answers otherwise
// than a name's records or its denial: transfers (REFUSED), meta-types
// (NOTIMP), ANY (the any plugin), DS (the server routes it to a parent's
// block when it has one), and in a signed zone NSEC and RRSIG (answered,
// never denied).
func fromBytes(qtype uint16, z *zone) bool {
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR, dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB, dns.TypeANY, dns.TypeDS:
		return false
	case dns.TypeNSEC, dns.TypeRRSIG:
		return z.signer == nil && !z.signed
	}
	return true
}

// answerMissing answers qname, which has no node in z: NXDOMAIN, as answer()
// writes it, when nothing else makes the name exist and no signature is
// asked for.
func (a *fastAnswerer) answerMissing(buf, q []byte, p query, qname string, z *zone, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	if h.static[qname] != "" || h.aboveStatic(qname) || h.aboveRegistrations(qname) ||
		h.cfg.catalog != "" && strings.HasSuffix(qname, h.cfg.catalog) {
		return nil, false
	}
	if p.flags&wireDO != 0 && z.signer != nil {
		return a.answerDenial(buf, q, p, z, client)
	}
	w := a.missingWire(z, p.flags)
	if w == nil || len(w.head)+p.questionEnd-12+len(w.tail) > min(p.size, maxUDPSize) {
		return nil, false
	}
	// NXDOMAINs by zone, as allowedRaw counts them.
	return a.respond(buf, q, p, client, rrlNXDomain, z.name, dns.RcodeNameError, z.kind, w.head, q[12:p.questionEnd], w.tail)
}

// answerDenial answers a missing name of a signed zone, asked with DO,
// from the denial ServeDNS sent for it (keepDenial): NOERROR with the
// name's signed NSEC.
func (a *fastAnswerer) answerDenial(buf, q []byte, p query, z *zone, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	e := h.denials.get(z, q[12:12+p.wireLen], p.flags, h.index.serial.Load(), time.Now().UnixMilli())
	if e == nil || len(e.head)+p.questionEnd-12+len(e.tail) > min(p.size, maxUDPSize) {
		return nil, false
	}
	// Denials by zone, as allowedRaw counts them.
	return a.respond(buf, q, p, client, rrlNXDomain, z.name, dns.RcodeSuccess, z.kind, e.head, q[12:p.questionEnd], e.tail)
}

// limited applies response_rate_limit as allowedRaw does.
func (a *fastAnswerer) limited(client netip.AddrPort, class int, name string, qtype uint16) (drop, slip bool) {
	if a.h.rrl == nil {
		return false, false
	}
	switch a.h.rrl.verdict(client.Addr(), class, strings.Clone(name), qtype) {
	case rrlDrop:
		rrlResponses[rrlDrop].Inc()
		return true, false
	case rrlSlip:
		rrlResponses[rrlSlip].Inc()
		return false, true
	}
	return false, false
}

// routed reports whether the server gives every name of z to this block:
// the nearest of its keys at or above z is this block's, and none of its
// keys is below z (another block's zone inside it).
func (a *fastAnswerer) routed(z *zone) bool {
	if v, ok := a.ours.Load(z.name); ok {
		return v.(bool)
	}
	ours := a.routes["."] // the server's last resort
	for k := range a.routes {
		if k != z.name && dns.IsSubDomain(z.name, k) {
			a.ours.Store(z.name, false)
			return false
		}
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(z.name, off) {
		if v, ok := a.routes[z.name[off:]]; ok {
			ours = v
			break
		}
	}
	a.ours.Store(z.name, ours)
	return ours
}

// missingWire is a zone's NXDOMAIN answer around the question, for each
// of the query flags it depends on (none, EDNS, EDNS with DO), at one
// serial: packed uncompressed, as write() sends it, so the question can be
// any name's.
type missingWire struct {
	zone       uintptr // the *zone it was packed for: kept by address, not kept alive
	serial     uint32
	head, tail []byte
}

type missingKey struct {
	zone  string
	flags uint8
}

// missingWire is z's NXDOMAIN answer for queries with flags, packed
// again when the serial or the flags change.
func (a *fastAnswerer) missingWire(z *zone, flags uint8) *missingWire {
	h := a.h
	serial := h.index.serial.Load()
	if v, ok := a.missing.Load(missingKey{z.name, flags}); ok {
		if w := v.(*missingWire); w.serial == serial && w.zone == uintptr(unsafe.Pointer(z)) {
			return w
		}
	}
	m := new(dns.Msg)
	m.Response, m.Authoritative, m.Rcode = true, true, dns.RcodeNameError
	m.Question = []dns.Question{{Name: ".", Qtype: dns.TypeA, Qclass: dns.ClassINET}}
	m.Ns = []dns.RR{h.soa(z, h.cfg.app.SOA.Minimum)}
	if flags&wireEDNS != 0 {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(maxUDPSize)
		if flags&wireDO != 0 {
			o.SetDo()
		}
		m.Extra = []dns.RR{o}
	}
	b, err := m.Pack()
	if err != nil {
		return nil
	}
	w := &missingWire{zone: uintptr(unsafe.Pointer(z)), serial: serial, head: b[:12], tail: b[12+5:]}
	a.missing.Store(missingKey{z.name, flags}, w)
	return w
}

// slipped is RRL's truncated reply to the query q: its question, and its
// OPT as the server's writer hands it back (flags but DO cleared), rcode,
// AA and TC set, as allowedRaw sends it.
func slipped(buf, q []byte, p query, rcode int) []byte {
	b := append(buf, q[:p.questionEnd]...)
	b[2] = b[2]&0x79 | 0x80 | 0x04 | 0x02 // QR, AA, TC; opcode and RD kept
	b[3] = b[3]&0x10 | byte(rcode)        // CD kept
	clear(b[6:12])                        // no answer, authority or additional records
	if p.flags&wireEDNS != 0 {
		b[11] = 1
		opt := len(b)
		b = append(b, q[p.questionEnd:p.questionEnd+11]...)
		b[opt+5], b[opt+8] = 0, 0 // extended rcode, the flags' low octet
	}
	return b
}

// query is what Answer needs of a query's bytes.
type query struct {
	nameLen     int // of the lowercase presentation name
	wireLen     int // of the name on the wire
	questionEnd int
	qtype       uint16
	flags       uint8 // wireFlags
	size        int   // the client's UDP buffer
}

// parseQuery reads a plain query from q: one question of class IN whose
// name is letters, digits, '-' and '_' (lowercased into name, dotted), and
// at most an OPT of version 0 with no options, nothing else. false for
// anything else: the full server reads it.
func parseQuery(q []byte, name *[256]byte) (query, bool) {
	var p query
	// ID, QR clear and opcode QUERY, rcode 0; one question, no answers
	// or authority, at most one additional record.
	if len(q) < 17 || q[2]&0xf8 != 0 || q[3]&0x0f != 0 ||
		binary.BigEndian.Uint16(q[4:]) != 1 || binary.BigEndian.Uint16(q[6:]) != 0 || binary.BigEndian.Uint16(q[8:]) != 0 {
		return p, false
	}
	ar := binary.BigEndian.Uint16(q[10:])
	off, n := 12, 0
	for {
		if off >= len(q) {
			return p, false
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(q) || n+l+1 > 254 {
			return p, false // a pointer, or too long
		}
		for _, c := range q[off : off+l] {
			switch {
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			default:
				return p, false // escaped in presentation form
			}
			name[n] = c
			n++
		}
		name[n] = '.'
		n++
		off += l
	}
	if n == 0 || off+4 > len(q) || binary.BigEndian.Uint16(q[off+2:]) != dns.ClassINET {
		return p, false
	}
	p.nameLen, p.wireLen = n, off-12
	p.qtype = binary.BigEndian.Uint16(q[off:])
	off += 4
	p.questionEnd, p.size = off, dns.MinMsgSize
	switch {
	case ar == 0 && off == len(q):
		return p, true
	case ar == 1 && off+11 == len(q):
		// OPT: root owner, type 41, class the buffer size, TTL: the
		// extended rcode (the answer clears it), version 0, DO and no
		// other flag the answer would echo; no options.
		if q[off] != 0 || binary.BigEndian.Uint16(q[off+1:]) != dns.TypeOPT || q[off+6] != 0 || q[off+7]&0x7f != 0 ||
			binary.BigEndian.Uint16(q[off+9:]) != 0 {
			return p, false
		}
		p.size = max(int(binary.BigEndian.Uint16(q[off+3:])), dns.MinMsgSize)
		p.flags = wireEDNS
		if q[off+7]&0x80 != 0 {
			p.flags |= wireDO
		}
		return p, true
	}
	return p, false
}
