// Package hostname is a CoreDNS plugin that answers authoritatively for
// Hostmint's domains from an in-memory index of the store, and starts
// Hostmint's HTTP API in the same process.
package hostname

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// maxUDPSize caps a UDP answer whatever EDNS buffer the client claims: the
// DNS Flag Day 2020 size, BIND's, Knot's and NSD's default. A bigger
// datagram fragments (and fragments get lost or spoofed), and a query with
// a forged source and a 64KB buffer would draw a 20KB answer at its victim.
// A bigger answer goes TC, and the client asks again over TCP.
const maxUDPSize = 1232

// Handler is the plugin handler.
type Handler struct {
	Next plugin.Handler

	cfg     *config
	index   *Index
	static  map[string]addrList  // nameserver names we answer for: lowercase FQDN -> addresses
	acmeDNS string               // acme_dns_domain, lowercase FQDN: it exists, holding nothing
	ns      []string             // NS targets, FQDN
	node    atomic.Pointer[Node] // set in OnStartup; the ready plugin asks from its own goroutine
	rrl     *rrl                 // response_rate_limit; nil: none
	wire    *wireCache           // names' answers, packed
	fast    *fastUDP             // fast_udp; nil: none
	denials *denialCache         // signed denials, packed (fast_udp)
	// tsigSecrets are the store's TSIG keys this server block verifies
	// (dynamic_update); updater applies the UPDATE messages they sign.
	tsigSecrets map[string]string
	updater     Updater
	reloader    *reloader
	// stopNotify ends the NOTIFYs to secondaries (set in OnStartup when
	// the server block transfers zones).
	stopNotify func()
	// catalogs caches the catalog zone of the newest zone set (catalog).
	catalogs atomic.Pointer[catalogData]
}

// configured reports whether qname is under a domain of the Corefile.
func (h *Handler) configured(qname string) bool {
	for _, d := range h.cfg.app.Domains {
		if dns.IsSubDomain(d+".", qname) {
			return true
		}
	}
	return false
}

// Name implements plugin.Handler.
func (h *Handler) Name() string { return "hostname" }

// ServeDNS implements plugin.Handler.
func (h *Handler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if h.fast != nil {
		h.startFast(ctx)
	}
	if r.Opcode == dns.OpcodeUpdate {
		return h.serveUpdate(ctx, w, r)
	}
	if extraOPTs(r) > 1 {
		// RFC 6891 6.1.1: more than one OPT is a malformed request.
		countAnswer(dns.RcodeFormatError, qtypeOf(r), kindOutside)
		return dns.RcodeFormatError, nil
	}
	state := request.Request{W: w, Req: r}
	qname := state.Name()
	z := h.index.zoneOf(qname)
	if r.Opcode == dns.OpcodeNotify && (z != nil || h.configured(qname)) {
		// This server is the primary of its zones: a NOTIFY tells it
		// nothing (RFC 1996 is for secondaries), and answering it like a
		// query would hand its SOA to whoever sends one. A NOTIFY for
		// another zone goes on to the plugins after this one.
		countAnswer(dns.RcodeNotImplemented, qtypeOf(r), kindOutside)
		return dns.RcodeNotImplemented, nil
	}
	// The catalog's names are its own, unless a served domain is more
	// specific (or the same name: a domain is never hidden by it).
	if h.cfg.catalog != "" && dns.IsSubDomain(h.cfg.catalog, qname) && (z == nil || !dns.IsSubDomain(h.cfg.catalog, z.name)) {
		return h.serveCatalog(w, r, state)
	}
	if z == nil && !h.index.Loaded() && h.configured(qname) {
		// Ours, but the zone set is not loaded yet: a refusal would mark us lame.
		countAnswer(dns.RcodeServerFailure, state.QType(), kindOutside)
		return dns.RcodeServerFailure, nil
	}
	if z == nil {
		if h.Next != nil {
			return plugin.NextOrFailure(h.Name(), h.Next, ctx, w, r)
		}
		return h.refuse(w, r, state, dns.RcodeRefused, kindOutside, "")
	}
	if !h.index.Loaded() || z.unservable() {
		countAnswer(dns.RcodeServerFailure, state.QType(), z.kind)
		return dns.RcodeServerFailure, nil
	}

	switch state.QType() {
	case dns.TypeAXFR, dns.TypeIXFR:
		// No transfer plugin took it (it comes before this one): refused
		// at once, as CoreDNS's file plugin does (RFC 5936 2.2), not
		// answered like a query while the client waits for a transfer.
		return h.refuse(w, r, state, dns.RcodeRefused, z.kind, z.name)
	case dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB:
		// Meta-types: nothing a name holds (RFC 6895 3.1).
		return h.refuse(w, r, state, dns.RcodeNotImplemented, z.kind, z.name)
	}

	// A name's answer from its packed bytes when it has them.
	var n *node
	if qname != z.name {
		if n = z.names.get(qname); n != nil && h.serveWire(w, r, state, z, n, qname) {
			return dns.RcodeSuccess, nil
		}
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	h.answer(m, z, state)
	rcode, err := h.write(w, r, state, m, z.kind, z.name)
	if out, _ := rawWriter(w); out != nil { // bytes are only ever sent there
		switch {
		case n != nil:
			h.keepWire(r, m, z, n, h.wireUntil(n))
		case h.fast.on() && qname != z.name:
			h.keepDenial(r, m, z)
		}
	}
	return rcode, err
}

// write sends m, the answer to r from zone: sized for the client, rate
// limited, counted, and signed when r was. It is packed once, here, and
// sent as bytes where nothing between the server and this plugin needs
// the message itself (rawWriter).
func (h *Handler) write(w dns.ResponseWriter, r *dns.Msg, state request.Request, m *dns.Msg, kind, zone string) (int, error) {
	size := state.Size()
	if state.Proto() == "udp" {
		size = min(size, maxUDPSize)
	}
	if state.SizeAndDo(m) {
		// Our own buffer size, not an echo of the client's (RFC 6891
		// 6.2.3), on a copy: SizeAndDo hands over the query's OPT.
		for i, rr := range m.Extra {
			if o, ok := rr.(*dns.OPT); ok {
				c := *o
				c.SetUDPSize(maxUDPSize)
				m.Extra[i] = &c
			}
		}
	}
	out, rec := rawWriter(w)
	var (
		b   []byte
		err error
	)
	if out != nil && r.IsTsig() == nil {
		// Packed here once, and sent as these bytes.
		bp := wireBufs.Get().(*[]byte)
		defer wireBufs.Put(bp)
		pack := func() { b, err = m.PackBuffer((*bp)[:cap(*bp)]) }
		pack()
		if err == nil && len(b) > size {
			// Too big for the client: compressed, and if that is not
			// enough, truncated (the client asks again over TCP).
			m.Compress = true
			if pack(); err == nil && len(b) > size {
				m.Truncate(size)
				pack()
			}
		}
	} else if m.Len() > size {
		// Len counts escaped TXT and CAA text (\DDD) as written, not as sent:
		// only a message that really does not fit is truncated.
		if p, err := m.Pack(); err != nil || len(p) > size {
			m.Truncate(size)
		}
	}
	if h.rrl != nil && !h.allowed(w, r, m, state, zone) {
		return dns.RcodeSuccess, nil
	}
	// Counted before it is sent: a client that has its answer finds it
	// counted (a scrape right after an answer must see it).
	countAnswer(m.Rcode, state.QType(), kind)
	switch {
	case b != nil && err == nil:
		sendRaw(out, rec, b, m.Rcode)
	default:
		signQuery(r, m)
		w.WriteMsg(m)
	}
	return dns.RcodeSuccess, nil
}

// allowed applies response_rate_limit to m, an answer over UDP from zone:
// false when it is not to be sent (dropped, or sent truncated and empty
// instead).
func (h *Handler) allowed(w dns.ResponseWriter, r, m *dns.Msg, state request.Request, zone string) bool {
	return h.allowedRaw(w, r, m.Rcode, len(m.Answer) > 0, state.Name(), state.QType(), zone)
}

// allowedRaw is allowed for an answer known by its rcode and whether it
// has answer records.
func (h *Handler) allowedRaw(w dns.ResponseWriter, r *dns.Msg, rcode int, answered bool, qname string, qt uint16, zone string) bool {
	ua, ok := w.RemoteAddr().(*net.UDPAddr)
	if !ok {
		return true // TCP: the source is real
	}
	class, name, qtype := rrlError, "", uint16(0)
	switch {
	case rcode == dns.RcodeSuccess && answered:
		class, name, qtype = rrlAnswer, qname, qt
	case rcode == dns.RcodeSuccess, rcode == dns.RcodeNameError:
		// NXDOMAIN, NODATA and a signed zone's denials (NOERROR with an
		// NSEC of the name's own): by zone, so that random names or types
		// share one allowance.
		class, name = rrlNXDomain, zone
	}
	switch h.rrl.verdict(ua.AddrPort().Addr(), class, name, qtype) {
	case rrlDrop:
		rrlResponses[rrlDrop].Inc()
		return false
	case rrlSlip:
		t := new(dns.Msg)
		t.SetRcode(r, rcode)
		t.Authoritative, t.Truncated = zone != "", true
		w.WriteMsg(t)
		rrlResponses[rrlSlip].Inc()
		return false
	}
	return true
}

// refuse answers r with rcode and nothing else (REFUSED for a name in no
// served zone or a transfer no plugin took, NOTIMP for a meta-type),
// through the limiter when there is one; never signed, as CoreDNS's own
// refusals.
func (h *Handler) refuse(w dns.ResponseWriter, r *dns.Msg, state request.Request, rcode int, kind, zone string) (int, error) {
	if h.rrl == nil {
		// CoreDNS's server writes the answer to an rcode it is handed.
		countAnswer(rcode, state.QType(), kind)
		return rcode, nil
	}
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	state.SizeAndDo(m)
	if !h.allowed(w, r, m, state, zone) {
		return dns.RcodeSuccess, nil
	}
	countAnswer(rcode, state.QType(), kind)
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// extraOPTs counts the OPT records of r's additional section.
func extraOPTs(r *dns.Msg) int {
	n := 0
	for _, rr := range r.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			n++
		}
	}
	return n
}

// qtypeOf is r's question type, TypeNone when it has none.
func qtypeOf(r *dns.Msg) uint16 {
	if len(r.Question) == 0 {
		return dns.TypeNone
	}
	return r.Question[0].Qtype
}
