package hostname

import (
	"context"

	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// acme-dns registrations for any domain: each serves its two newest values
// as TXT at its own name, <uuid>.<acme_dns_domain>, for records.ChallengeLife
// after the newest was written, like a hostname's challenge values.

// loadRegistrations puts every registration with values still served into
// zs, as Load reads the hostnames.
func (ix *Index) loadRegistrations(ctx context.Context, q storage.Queries, zs zoneSet, loaded int64) (map[string]string, error) {
	names := map[string]string{}
	since := loaded - records.ChallengeLife.Milliseconds()
	err := q.ScanServedRegistrations(ctx, since, func(r *storage.Registration) error {
		n := registrationNode(r)
		settle(n, nil, loaded)
		if name := dns.Fqdn(r.Name); zs.put(name, n) {
			names[r.ID] = name
		}
		return nil
	})
	return names, err
}

// applyRegistrations replaces the nodes of the registrations ids (deleted
// ones are dropped) and notes what each name held before in the journal.
func (ix *Index) applyRegistrations(rs []storage.Registration, ids []string, zs zoneSet, serial uint32, built int64, zones map[string]bool) {
	byID := make(map[string]*storage.Registration, len(rs))
	for i := range rs {
		byID[rs[i].ID] = &rs[i]
	}
	for _, id := range ids {
		name, had := ix.regNames[id]
		var n *node
		if r := byID[id]; r != nil {
			name, n = dns.Fqdn(r.Name), registrationNode(r)
			settle(n, nil, built)
		}
		if name == "" {
			continue // never served, and gone
		}
		z := zs.of(name)
		if z == nil {
			continue // in no served zone
		}
		old := z.names.get(name)
		if n != nil {
			z.names.put(name, n)
			ix.regNames[id] = name
		} else if had {
			z.names.drop(name, holder(id))
			delete(ix.regNames, id)
		}
		ix.jr.add(serial, z.name, name, old)
		zones[z.name] = true
	}
}

// registrationNode serves r's values, nil when it has none.
func registrationNode(r *storage.Registration) *node {
	if r.TXTAt == 0 || r.TXTNew == "" {
		return nil
	}
	owner := dns.Fqdn(r.Name)
	n := &node{owner: holder(r.ID), expires: r.TXTAt + records.ChallengeLife.Milliseconds(), rrsets: map[uint16][]dns.RR{}}
	for _, v := range []string{r.TXTNew, r.TXTOld} {
		if v == "" {
			continue
		}
		n.rrsets[dns.TypeTXT] = append(n.rrsets[dns.TypeTXT], &dns.TXT{
			Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: records.ChallengeTTL},
			Txt: []string{v},
		})
	}
	return n
}
