package hostname

import "github.com/miekg/dns"

// soa is the zone's SOA with the given TTL. The serial is the newest change
// applied, so every node that has applied the same changes agrees on it.
func (h *Handler) soa(z *zone, ttl uint32) dns.RR {
	return h.cfg.app.SOA.RR(z.name, h.ns[0], h.index.Serial(), ttl)
}
