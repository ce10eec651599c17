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

// startNotify starts NOTIFYing the secondaries of cfg's transfer plugin,
// if the server block has one.
func (h *Handler) startNotify(cfg *dnsserver.Config) error {
	if t, ok := cfg.Handler("transfer").(*transfer.Transfer); ok && t != nil {
		h.stopNotify = h.xfr.StartNotify(t)
	}
	return nil
}
