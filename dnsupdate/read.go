package dnsupdate

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Reading the zone: each name a message names is read once, its hostname's
// row locked, before anything is decided (readAll), as what it is in the
// zone (kindOf) and what the store holds there.

// lockLabel reads the hostname that holds n's label: through the rule a
// mint of it goes through, which reads ahead what the mint needs
// (hostnames.LockLabel), when n is a hostname's own name.
func (z *zoneState) lockLabel(ctx context.Context, n *node) (*storage.Hostname, error) {
	if n.kind == kindHostname {
		return z.u.rules.Lifecycle.LockLabel(ctx, z.tx, z.p, z.dom, n.label)
	}
	return z.q.LockHostnameByLabel(ctx, z.dom.ID, n.label)
}

// at reads (once) the node at name.
func (z *zoneState) at(ctx context.Context, name string) (*node, error) {
	name = lower(name)
	if n := z.names[name]; n != nil {
		return n, nil
	}
	n := &node{name: name, was: rrsets{}}
	n.kind, n.label = z.kindOf(name)
	if n.label != "" {
		h, err := z.lockLabel(ctx, n)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			n.host = h
		}
	}
	if n.host != nil && z.u.rules.Lifecycle.Served(n.host) {
		switch n.kind {
		case kindHostname:
			for _, a := range n.host.ServedAddrs() {
				t := dns.TypeA
				if a.Is6() {
					t = dns.TypeAAAA
				}
				n.was[t] = append(n.was[t], a.String())
			}
			n.was[dns.TypeDHCID] = served.DHCIDs(n.host)
		case kindChallenge:
			cs, err := z.q.Challenges(ctx, n.host.ID)
			if err != nil {
				return nil, err
			}
			n.chals = cs
			for _, c := range cs {
				n.was[dns.TypeTXT] = append(n.was[dns.TypeTXT], quote(c.Value))
			}
		}
		if z.u.profile.Teams() && (n.kind == kindHostname || n.kind == kindRecords) {
			if err := z.readRecords(ctx, n); err != nil {
				return nil, err
			}
		}
	}
	n.now = n.was.clone()
	z.names[name] = n
	z.order = append(z.order, name)
	return n, nil
}

// kindOf is what the name is in the zone, and the hostname label it is
// at or under ("" for none).
func (z *zoneState) kindOf(name string) (nodeKind, string) {
	labels := z.labels(name)
	switch {
	case name == z.dom.Name:
		return kindApex, ""
	case len(labels) == 1:
		return kindHostname, labels[0]
	case len(labels) == 2 && labels[0] == records.ChallengeLabel:
		return kindChallenge, labels[1]
	case z.u.profile.Teams():
		return kindRecords, labels[len(labels)-1]
	}
	return kindOther, ""
}

func quote(s string) string { return `"` + s + `"` }

// readRecords reads the hostname's records at n's name.
func (z *zoneState) readRecords(ctx context.Context, n *node) error {
	rs, err := z.q.Records(ctx, n.host.ID)
	if err != nil {
		return err
	}
	n.ids = map[string]string{}
	for _, r := range rs {
		if r.Name != n.name {
			continue
		}
		n.recs = append(n.recs, r)
		d, err := records.Decode(r.Type, []byte(r.Data))
		if err != nil {
			return err
		}
		rr, err := d.RR(r.Type, dns.Fqdn(r.Name), records.TTL)
		if err != nil {
			return err
		}
		t, v := rr.Header().Rrtype, rdata(rr)
		n.was[t] = append(n.was[t], v)
		n.ids[rrKey(t, v)] = r.ID
	}
	return nil
}

// readAll reads (and locks) every name of the message before anything is
// decided, in the order of their hostnames' labels: two messages lock
// rows in one order, and no write meets a row another message is judging.
func (z *zoneState) readAll(ctx context.Context, r *dns.Msg) error {
	for _, name := range z.sortedNames(r) {
		if _, err := z.at(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// sortedNames are the names r's prerequisites and updates are at, in the
// order readAll reads them.
func (z *zoneState) sortedNames(r *dns.Msg) []string {
	var names []string
	for _, rr := range append(append([]dns.RR{}, r.Answer...), r.Ns...) {
		names = append(names, lower(rr.Header().Name))
	}
	slices.SortFunc(names, func(a, b string) int {
		return strings.Compare(z.labelOf(a)+"\x00"+a, z.labelOf(b)+"\x00"+b)
	})
	return slices.Compact(names)
}

// labelOf is the label directly under the zone that name is at or under.
func (z *zoneState) labelOf(name string) string {
	labels := z.labels(name)
	return labels[len(labels)-1]
}

// labels are name's labels below the zone ([""] for the apex).
func (z *zoneState) labels(name string) []string {
	return strings.Split(strings.TrimSuffix(strings.TrimSuffix(name, z.dom.Name), "."), ".")
}
