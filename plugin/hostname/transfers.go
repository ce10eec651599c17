package hostname

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/miekg/dns"
)

// Transfer implements transfer.Transferer: the plugin's transfers (xfr)
// serve AXFR and IXFR of its zones and of the catalog.
func (h *Handler) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	return h.xfr.Transfer(zone, serial)
}

// serveCatalog answers a question in the catalog zone, as any zone's
// (secondaries ask for its SOA); it is not signed.
func (h *Handler) serveCatalog(w dns.ResponseWriter, r *dns.Msg, state request.Request) (int, error) {
	if !h.index.Loaded() {
		answer.Count(dns.RcodeServerFailure, state.QType(), answer.KindCatalog)
		return dns.RcodeServerFailure, nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	h.xfr.CatalogAnswer(m, state.Name(), state.QType())
	var name [256]byte
	q, client, ok := h.ask(w, r, state, &name)
	if !ok {
		return dns.RcodeFormatError, nil
	}
	b, _ := h.answers.RespondMsg(nil, &q, m, answer.KindCatalog, h.cfg.catalog, client)
	return deliver(w, r, b)
}

// serveUDPIXFR answers an IXFR over UDP of one of the zones with the
// zone's SOA alone, as RFC 1995 (2) has a server do when the difference
// does not fit a datagram: a secondary that is behind asks again over
// TCP, where the transfer plugin decides who may transfer. The SOA is what
// any query of it answers, so no client learns more; CoreDNS's transfer
// plugin, which comes before this one, would refuse it. done is false for
// any other message, which goes on down the chain.
func (h *Handler) serveUDPIXFR(w dns.ResponseWriter, r *dns.Msg) (rcode int, done bool) {
	if len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeIXFR || r.Opcode != dns.OpcodeQuery {
		return 0, false
	}
	state := request.Request{W: w, Req: r}
	if state.Proto() != "udp" || !h.index.Loaded() {
		return 0, false
	}
	z := h.index.Zone(dns.CanonicalName(state.Name()))
	if z == nil || z.Unservable() {
		return 0, false
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Answer = []dns.RR{h.answers.ApexSOA(z)}
	var name [256]byte
	q, client, ok := h.ask(w, r, state, &name)
	if !ok {
		return 0, false
	}
	b, _ := h.answers.RespondMsg(nil, &q, m, z.Kind, z.Name, client)
	rcode, _ = deliver(w, r, b)
	return rcode, true
}

// startNotify starts NOTIFYing the secondaries of cfg's transfer plugin,
// if the server block has one.
func (h *Handler) startNotify(cfg *dnsserver.Config) error {
	if t, ok := cfg.Handler("transfer").(*transfer.Transfer); ok && t != nil {
		h.stopNotify = h.xfr.StartNotify(t)
	}
	return nil
}
