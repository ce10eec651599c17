// Package hostname is a CoreDNS plugin that answers authoritatively for
// Hostmint's domains from an in-memory index of the store, and starts
// Hostmint's HTTP API in the same process.
package hostname

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// Hostname is the plugin handler.
type Hostname struct {
	Next plugin.Handler

	cfg    *config
	index  *Index
	static map[string]addrList // nameserver names we answer for: lowercase FQDN -> addresses
	ns     []string            // NS targets, FQDN
	rt     *runtime            // set in OnStartup
}

// configured reports whether qname is under a domain of the Corefile.
func (h *Hostname) configured(qname string) bool {
	for _, d := range h.cfg.domains {
		if dns.IsSubDomain(d+".", qname) {
			return true
		}
	}
	return false
}

// Name implements plugin.Handler.
func (h *Hostname) Name() string { return "hostname" }

// ServeDNS implements plugin.Handler.
func (h *Hostname) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	qname := state.Name()
	z := h.index.zoneOf(qname)
	if z == nil && !h.index.Loaded() && h.configured(qname) {
		// Ours, but the zone set is not loaded yet: a refusal would mark us lame.
		answersTotal.WithLabelValues("SERVFAIL").Inc()
		return dns.RcodeServerFailure, nil
	}
	if z == nil {
		if h.Next != nil {
			return plugin.NextOrFailure(h.Name(), h.Next, ctx, w, r)
		}
		answersTotal.WithLabelValues("REFUSED").Inc()
		return dns.RcodeRefused, nil
	}
	if !h.index.Loaded() {
		answersTotal.WithLabelValues("SERVFAIL").Inc()
		return dns.RcodeServerFailure, nil
	}

	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	h.answer(m, z, state)

	state.SizeAndDo(m)
	if m.Len() > state.Size() {
		// Len counts escaped TXT and CAA text (\DDD) as written, not as sent:
		// only a message that really does not fit is truncated.
		if b, err := m.Pack(); err != nil || len(b) > state.Size() {
			m = state.Scrub(m)
		}
	}
	w.WriteMsg(m)
	answersTotal.WithLabelValues(dns.RcodeToString[m.Rcode]).Inc()
	return dns.RcodeSuccess, nil
}
