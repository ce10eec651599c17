package dnsupdate

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// WithApex sets what every zone's apex serves from configuration, as DNS
// serves it: the nameservers (the NS set, and the addresses at their
// names) and the SOA's values. Prerequisites at those names see them.
func (u *Updater) WithApex(ns served.Nameservers, soa served.SOA) *Updater {
	u.ns, u.soa = ns, soa
	return u
}

// servedAt is what DNS serves at n's name, as prerequisites (RFC 2136
// 3.2) see it: the projection of package served over the rows this
// message read and locked at that name, so a prerequisite holds exactly
// when a query shows what it states, in the same transaction that writes.
// Built once a name, and only for names a prerequisite is at.
func (z *zoneState) servedAt(ctx context.Context, n *node) (rrsets, error) {
	if n.served != nil {
		return n.served, nil
	}
	fqdn := n.name + "."
	var sets map[uint16][]dns.RR
	switch {
	case n.kind == kindApex:
		policy, err := z.policy(ctx)
		if err != nil {
			return nil, err
		}
		serial, err := z.q.LastChange(ctx) // the serial DNS serves once its feed has this change
		if err != nil {
			return nil, err
		}
		sets = served.Apex(fqdn, z.u.ns, z.u.soa, uint32(serial), policy)
	case z.u.ns.At(fqdn) != nil:
		sets = z.u.ns.At(fqdn)
	case n.host != nil && z.u.rules.Lifecycle.Served(n.host):
		own, below, ok := served.Hostname(n.host, n.recs, n.chals, nil)
		at := below[fqdn]
		if n.kind == kindHostname && ok {
			at = &own
		}
		if at == nil || !at.Live(time.Now().UnixMilli()) {
			break
		}
		var policy []dns.RR
		if at.Host {
			var err error
			if policy, err = z.policy(ctx); err != nil {
				return nil, err
			}
		}
		sets = at.Served(fqdn, policy, 0)
	}
	n.served = rrsets{}
	for t, set := range sets {
		for _, rr := range set {
			n.served[t] = append(n.served[t], rdata(rr))
		}
	}
	return n.served, nil
}

// policy is the zone's CAA policy as its domain's row holds it now (the
// Updater keeps the domain's name and id only, which never change).
func (z *zoneState) policy(ctx context.Context) ([]dns.RR, error) {
	d, err := z.q.DomainByName(ctx, z.dom.Name)
	if err != nil {
		return nil, err
	}
	return served.Policy(d), nil
}
