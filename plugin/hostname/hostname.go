// Package hostname is a CoreDNS plugin that answers authoritatively for
// Hostmint's domains from an in-memory index of the store, and starts
// Hostmint's HTTP API in the same process.
package hostname

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/fastudp"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/miekg/dns"
)

// Handler is the plugin handler.
type Handler struct {
	Next plugin.Handler

	cfg     *config
	index   *index.Index
	node    atomic.Pointer[Node] // set in OnStartup; the ready plugin asks from its own goroutine
	answers *answer.Answerer     // every answer to a question in our zones
	fast    *fastudp.Fast        // fast_udp; nil: none
	// tsigSecrets are the store's TSIG keys this server block verifies
	// (dynamic_update); updater applies the UPDATE messages they sign.
	tsigSecrets map[string]string
	updater     Updater
	reloader    *reloader
	// stopNotify ends the NOTIFYs to secondaries (set in OnStartup when
	// the server block transfers zones).
	stopNotify func()
	xfr        *xfr.Transfers // zone transfers, the catalog and NOTIFYs
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

// inCatalog reports whether qname, whose most specific served zone is z
// (nil: none), is the catalog's: its names are its own, unless a served
// domain is more specific (or the same name: a domain is never hidden by
// it).
func (h *Handler) inCatalog(qname string, z *index.Zone) bool {
	return h.cfg.catalog != "" && dns.IsSubDomain(h.cfg.catalog, qname) && (z == nil || !dns.IsSubDomain(h.cfg.catalog, z.Name))
}

// Name implements plugin.Handler.
func (h *Handler) Name() string { return "hostname" }

// ServeDNS implements plugin.Handler.
func (h *Handler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if h.fast != nil {
		h.fast.Start(ctx)
	}
	if r.Opcode == dns.OpcodeUpdate {
		return h.serveUpdate(ctx, w, r)
	}
	state := request.Request{W: w, Req: r}
	if extraOPTs(r) > 1 {
		// RFC 6891 6.1.1: more than one OPT is a malformed request.
		return h.refuse(w, r, state, dns.RcodeFormatError, answer.KindOutside, "")
	}
	qname := state.Name()
	z := h.index.ZoneOf(qname)
	if r.Opcode == dns.OpcodeNotify && (z != nil || h.configured(qname)) {
		// This server is the primary of its zones: a NOTIFY tells it
		// nothing (RFC 1996 is for secondaries), and answering it like a
		// query would hand its SOA to whoever sends one. A NOTIFY for
		// another zone goes on to the plugins after this one.
		return h.refuse(w, r, state, dns.RcodeNotImplemented, answer.KindOutside, "")
	}
	if h.inCatalog(qname, z) {
		return h.serveCatalog(w, r, state)
	}
	if z == nil && !h.index.Loaded() && h.configured(qname) {
		// Ours, but the zone set is not loaded yet: a refusal would mark us lame.
		return h.refuse(w, r, state, dns.RcodeServerFailure, answer.KindOutside, "")
	}
	if z == nil {
		if h.Next != nil {
			return plugin.NextOrFailure(h.Name(), h.Next, ctx, w, r)
		}
		return h.refuse(w, r, state, dns.RcodeRefused, answer.KindOutside, "")
	}
	if !h.index.Loaded() || z.Unservable() {
		return h.refuse(w, r, state, dns.RcodeServerFailure, z.Kind, z.Name)
	}

	if rcode := refusedType(state.QType()); rcode != dns.RcodeSuccess {
		return h.refuse(w, r, state, rcode, z.Kind, z.Name)
	}

	var name [256]byte
	q, client, ok := h.ask(w, r, state, &name)
	if !ok {
		return dns.RcodeFormatError, nil
	}
	if out, rec := rawWriter(w); out != nil && r.IsTsig() == nil {
		bp := wireBufs.Get().(*[]byte)
		defer wireBufs.Put(bp)
		b, rcode := h.answers.Respond((*bp)[:0], &q, z, client)
		if b != nil {
			sendRaw(out, rec, b, rcode)
			*bp = b
		}
		return dns.RcodeSuccess, nil
	}
	if m := h.answers.Message(&q, r.Question[0].Name, z, client); m != nil {
		signQuery(r, m)
		w.WriteMsg(m)
	}
	return dns.RcodeSuccess, nil
}

// refusedType is the rcode a query of qtype in a served zone is refused
// with, NOERROR when the answerer answers it. A transfer no transfer plugin
// took (it comes before this one) is refused at once, as CoreDNS's file
// plugin does (RFC 5936 2.2), not answered like a query while the client
// waits for a transfer; a meta-type is nothing a name holds (RFC 6895 3.1).
func refusedType(qtype uint16) int {
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		return dns.RcodeRefused
	case dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB:
		return dns.RcodeNotImplemented
	case sign.TypeNXNAME:
		return dns.RcodeFormatError // RFC 9824 3.5
	}
	return dns.RcodeSuccess
}

// ask is r as the answerer reads it, and its client over UDP when a
// response_rate_limit needs it (the source of a datagram may be forged).
func (h *Handler) ask(w dns.ResponseWriter, r *dns.Msg, state request.Request, name *[256]byte) (answer.Ask, netip.Addr, bool) {
	q, ok := answer.AskOf(r, state, name)
	var client netip.Addr
	if h.answers.Limits() {
		if ua, ok := w.RemoteAddr().(*net.UDPAddr); ok {
			client = ua.AddrPort().Addr()
		}
	}
	return q, client, ok
}

// deliver sends w b, the answerer's answer to r: as bytes where nothing
// between the server and this plugin reads messages (rawWriter) and r is
// not signed; else as the message, signed when r was (the catalog's
// answers, refusals). Nothing when b is nil (response_rate_limit dropped
// it).
func deliver(w dns.ResponseWriter, r *dns.Msg, b []byte) (int, error) {
	if b == nil {
		return dns.RcodeSuccess, nil
	}
	if out, rec := rawWriter(w); out != nil && r.IsTsig() == nil {
		sendRaw(out, rec, b, int(b[3]&0x0f))
		return dns.RcodeSuccess, nil
	}
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		return dns.RcodeServerFailure, err
	}
	m.Compress = true // as it was fitted
	signQuery(r, m)
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// refuse answers r with rcode and nothing else (REFUSED for a name in no
// served zone or a transfer no plugin took, NOTIMP for a meta-type or a
// NOTIFY, SERVFAIL before the zones load, FORMERR for a second OPT): its
// question, our own OPT when it had one (no echo of its flags, RFC 6891
// 6.1.4), CD clear; through the limiter when there is one; never signed,
// as CoreDNS's own refusals. Written here, not left to CoreDNS's server,
// whose error answers echo the query's OPT and CD bit.
func (h *Handler) refuse(w dns.ResponseWriter, r *dns.Msg, state request.Request, rcode int, kind, zone string) (int, error) {
	if len(r.Question) != 1 {
		// CoreDNS's server takes no such message (dns.DefaultMsgAcceptFunc).
		answer.Count(rcode, qtypeOf(r), kind)
		return rcode, nil
	}
	var name [256]byte
	q, client, ok := h.ask(w, r, state, &name)
	if !ok {
		return dns.RcodeFormatError, nil
	}
	unsigned := &dns.Msg{MsgHdr: r.MsgHdr, Question: r.Question, Extra: withoutTSIG(r.Extra)}
	return deliver(w, unsigned, h.answers.Refusal(nil, &q, rcode, kind, zone, client))
}

// withoutTSIG is extra without its TSIG: a refusal is never signed.
func withoutTSIG(extra []dns.RR) []dns.RR {
	if n := len(extra); n > 0 && extra[n-1].Header().Rrtype == dns.TypeTSIG {
		return extra[:n-1]
	}
	return extra
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
