package fastudp

import (
	"net/netip"
	"sync"

	"github.com/miekg/dns"
)

// Answering is the udpbatch.Answerer of one server whose zone keys are
// routes (true where the block the server gives a key's names to is the
// plugin's): it reads each plain query and asks a.
func Answering(a Answerer, routes map[string]bool) *Server {
	s := &Server{answer: a, routes: routes}
	s.mine = s.routed
	return s
}

// Server answers one CoreDNS server's plain queries.
type Server struct {
	answer Answerer
	routes map[string]bool
	ours   sync.Map // zone name -> bool: the server gives every name of the zone here
	mine   func(zone string) bool
}

// names hold the lowercase name of a query being answered: the Query
// points at it, for the call only.
var names = sync.Pool{New: func() any { return new([256]byte) }}

// Answer implements udpbatch.Answerer: the plugin's answer to a plain
// query of a name it answers here, of a type no plugin before it takes;
// nil and false for every other query, which the CoreDNS server answers;
// nil and true when response_rate_limit drops it.
func (s *Server) Answer(buf, q []byte, client netip.AddrPort) ([]byte, bool) {
	nb := names.Get().(*[256]byte)
	defer names.Put(nb)
	p, ok := ParseQuery(q, nb)
	if !ok || !fromBytes(p.Qtype) {
		return nil, false
	}
	b, ok := s.answer.Answer(buf, p, client.Addr(), s.mine)
	return b, ok && b == nil
}

// fromBytes reports whether a query of qtype may be answered beside the
// server: not the types a plugin before this one may take (transfer takes
// AXFR and IXFR, any takes ANY), nor DS (the server gives it to a parent
// zone's block when it has one). What the plugin itself refuses, its
// Answerer says.
func fromBytes(qtype uint16) bool {
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR, dns.TypeANY, dns.TypeDS:
		return false
	}
	return true
}

// routed reports whether the server gives every name of zone to this
// block: the nearest of its keys at or above zone is this block's, and
// none of its keys is below zone (another block's zone inside it).
func (s *Server) routed(zone string) bool {
	if v, ok := s.ours.Load(zone); ok {
		return v.(bool)
	}
	ours := s.routes["."] // the server's last resort
	for k := range s.routes {
		if k != zone && dns.IsSubDomain(zone, k) {
			s.ours.Store(zone, false)
			return false
		}
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(zone, off) {
		if v, ok := s.routes[zone[off:]]; ok {
			ours = v
			break
		}
	}
	s.ours.Store(zone, ours)
	return ours
}
