package index

import (
	"cmp"
	"context"
	"slices"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// acme-dns registrations for any domain: each serves its two newest values
// as TXT at its own name, <uuid>.<acme_dns_domain>, for served.ChallengeLife
// after the newest was written, like a hostname's challenge values.

// withoutRegistrationNames drops from a hostname's nodes those at or below
// acme_dns_domain, which only registrations hold: a hostname that held the
// label before the option was set, or a record below one, never answers
// for a registration's name (a CA would take its TXT for the owner's).
func (ix *Index) withoutRegistrationNames(name string, own *Node, below map[string]*Node) (*Node, map[string]*Node) {
	name = dns.Fqdn(name)
	if ix.acmeDNS == "" {
		return own, below
	}
	if dns.IsSubDomain(ix.acmeDNS, name) {
		clog.Warningf("hostname %s is at or below acme_dns_domain %s, which only acme-dns registrations hold: it is not served", name, ix.acmeDNS)
		return nil, nil
	}
	for n := range below {
		if dns.IsSubDomain(ix.acmeDNS, n) {
			clog.Warningf("%s, below hostname %s, is at or below acme_dns_domain %s: it is not served", n, name, ix.acmeDNS)
			delete(below, n)
		}
	}
	return own, below
}

// servesRegistration reports whether a registration's name is below
// acme_dns_domain: one made under another (the option changed, or an
// import named another domain) is not served.
func (ix *Index) servesRegistration(name string) bool {
	return ix.acmeDNS != "" && name != ix.acmeDNS && dns.IsSubDomain(ix.acmeDNS, name)
}

// loadRegistrations puts every registration with values still served into
// zs, as Load reads the hostnames.
func (ix *Index) loadRegistrations(ctx context.Context, q storage.Queries, zs Set, loaded int64) (map[string]string, []regDue, error) {
	names := map[string]string{}
	var due []regDue
	since := loaded - served.ChallengeLife.Milliseconds()
	err := q.ScanServedRegistrations(ctx, since, func(r *storage.Registration) error {
		name := dns.Fqdn(r.Name)
		if !ix.servesRegistration(name) {
			return nil
		}
		n := registrationNode(r)
		Settle(n, nil, loaded)
		if zs.Put(name, n) {
			names[r.ID] = name
			due = append(due, regDue{at: n.Expires, id: r.ID, name: name})
		}
		return nil
	})
	slices.SortFunc(due, func(a, b regDue) int { return cmp.Compare(a.at, b.at) })
	return names, due, err
}

// regDue is when a served registration's values stop being served.
type regDue struct {
	at       int64 // Unix ms
	id, name string
}

// sweepRegistrations drops the nodes of registrations whose values have
// stopped being served (they answer as if absent already), so that the
// index holds those of the last day, not of every one ever updated. The
// queue is in the order values were written, which is their expiry's.
func (ix *Index) sweepRegistrations(zs Set, now int64) {
	i := 0
	for ; i < len(ix.regDue) && ix.regDue[i].at <= now; i++ {
		d := ix.regDue[i]
		if ix.regNames[d.id] != d.name {
			continue
		}
		if n := zs.Get(d.name); n != nil && n.Owner == Holder(d.id) && n.Expires > now {
			continue // published again since: a later entry is due
		}
		zs.Drop(d.name, Holder(d.id))
		delete(ix.regNames, d.id)
	}
	ix.regDue = ix.regDue[i:]
}

// applyRegistrations replaces the nodes of the registrations ids (deleted
// ones are dropped) and notes what each name held before in the journal.
func (ix *Index) applyRegistrations(rs []storage.Registration, ids []string, zs Set, serial uint32, built int64, zones map[string]bool) {
	byID := make(map[string]*storage.Registration, len(rs))
	for i := range rs {
		byID[rs[i].ID] = &rs[i]
	}
	for _, id := range ids {
		name, had := ix.regNames[id]
		var n *Node
		if r := byID[id]; r != nil && ix.servesRegistration(dns.Fqdn(r.Name)) {
			name, n = dns.Fqdn(r.Name), registrationNode(r)
			Settle(n, nil, built)
		}
		if name == "" {
			continue // never served, and gone
		}
		z := zs.Of(name)
		if z == nil {
			continue // in no served zone
		}
		old := z.Names.Get(name)
		if n != nil {
			z.Names.Put(name, n)
			ix.regNames[id] = name
			ix.regDue = append(ix.regDue, regDue{at: n.Expires, id: id, name: name})
		} else if had {
			z.Names.drop(name, Holder(id))
			delete(ix.regNames, id)
		}
		ix.jr.add(serial, z.Name, name, old)
		zones[z.Name] = true
	}
}

// registrationNode is the index's node of what r serves (served.Registration).
func registrationNode(r *storage.Registration) *Node {
	n := served.Registration(r)
	if n == nil {
		return nil
	}
	return &Node{Owner: Holder(r.ID), Expires: n.Expires, RRsets: n.RRsets}
}
