package answer

import (
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

// SOA is the zone's SOA with the given TTL. The serial is the newest change
// applied, so every node that has applied the same changes agrees on it.
// ApexSOA is z's SOA as a query for it is answered.
func (a *Answerer) ApexSOA(z *index.Zone) dns.RR { return a.SOA(z, a.soaCfg.Minimum) }

func (a *Answerer) SOA(z *index.Zone, ttl uint32) dns.RR {
	return a.soaCfg.RR(z.Name, a.ns[0], a.ix.Serial(), ttl)
}
