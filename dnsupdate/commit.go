package dnsupdate

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// changes reports whether the updates leave any name other than it was
// read: if not, commit would make no rule call.
func (z *zoneState) changes() bool {
	for _, n := range z.names {
		if !n.dirty {
			continue
		}
		for t, vs := range n.now {
			if !sameSet(n.was[t], vs) {
				return true
			}
		}
		for t, vs := range n.was {
			if !sameSet(vs, n.now[t]) {
				return true
			}
		}
	}
	return false
}

// commit makes the rule calls that the state's differences stand for,
// inside the message's transaction. The hostnames the message mints come
// first, so that the names under them it writes (a challenge, [P2]
// records) find them whatever their order in the message: a message is
// one change. The rest follow in the message's order.
func (z *zoneState) commit(ctx context.Context, p *access.Principal) error {
	minted := map[string]*storage.Hostname{} // by label
	for _, name := range z.order {
		if n := z.names[name]; n.dirty && n.kind == kindHostname && mints(n, p) {
			if err := z.commitAddress(ctx, p, n); err != nil {
				return err
			}
			minted[n.label] = n.host
		}
	}
	for _, name := range z.order {
		n := z.names[name]
		if !n.dirty {
			continue
		}
		if h := minted[n.label]; h != nil {
			n.host = h // read before the mint: none, or another team's not served
		}
		// Records first: a hostname the message releases keeps none.
		if err := z.commitRecords(ctx, p, n); err != nil {
			return err
		}
		var err error
		switch {
		case n.kind == kindHostname && minted[n.label] == nil:
			err = z.commitAddress(ctx, p, n)
		case n.kind == kindChallenge:
			err = z.commitChallenges(ctx, p, n)
		}
		if err == nil && n.kind == kindHostname {
			err = z.commitDHCID(ctx, p, n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mints reports whether committing hostname node n creates its hostname:
// the message gives it an address, and no hostname of this team holds
// its label (none does, or another team's that is not served).
func mints(n *node, p *access.Principal) bool {
	was := len(n.was[dns.TypeA]) + len(n.was[dns.TypeAAAA])
	now := len(n.now[dns.TypeA]) + len(n.now[dns.TypeAAAA])
	return now > 0 && (n.host == nil || n.host.AccountID != p.AccountID && was == 0)
}

// commitAddress makes the address calls: a hostname's addresses are set
// by the rule dyndns2 uses too (SetAddrs: one address [P1], one of each
// family [P2]), a new label is minted, and no address left releases.
func (z *zoneState) commitAddress(ctx context.Context, p *access.Principal, n *node) error {
	was := append(slices.Clone(n.was[dns.TypeA]), n.was[dns.TypeAAAA]...)
	now := append(slices.Clone(n.now[dns.TypeA]), n.now[dns.TypeAAAA]...) // IPv4 first, as SetAddrs takes them
	lc := z.u.rules.Lifecycle
	switch {
	case sameSet(was, now):
		return nil
	case len(now) == 0:
		return lc.Release(ctx, p, n.host.ID)
	case mints(n, p):
		// A label held by no hostname, or by another team's that is not
		// served: the rules decide whether it can be taken.
		in := hostnames.CreateInput{IP: &now[0]}
		if z.u.profile.Teams() {
			in.Subdomain, in.Domain = &n.label, &z.dom.Name
		} else {
			in.Label = &n.label
		}
		h, err := lc.Create(ctx, p, in)
		if err != nil {
			return err
		}
		n.host = h // minted with its first address; the rule of addresses takes the rest
		if len(now) == 1 {
			return nil
		}
	}
	addrs := make([]netip.Addr, len(now))
	for i, a := range now {
		addrs[i], _ = netip.ParseAddr(a) // rdata of A and AAAA: addresses
	}
	_, _, err := lc.SetAddrs(ctx, p, n.host.ID, addrs)
	return err
}

// commitDHCID sets the DHCID RRset of a hostname node the message changed
// it at. It stands beside an address: a name the message leaves without
// one keeps none (a release takes it), and one it gives none first cannot
// take one.
func (z *zoneState) commitDHCID(ctx context.Context, p *access.Principal, n *node) error {
	was, now := n.was[dns.TypeDHCID], n.now[dns.TypeDHCID]
	addrs := len(n.now[dns.TypeA]) + len(n.now[dns.TypeAAAA])
	switch {
	case sameSet(was, now), addrs == 0 && len(was) > 0:
		return nil
	case addrs == 0 || n.host == nil:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited,
			fmt.Sprintf("%s has no address; a DHCID stands beside a hostname's address (RFC 4703)", n.name))
	}
	return z.u.rules.Lifecycle.SetDHCID(ctx, p, n.host.ID, now)
}

func (z *zoneState) commitChallenges(ctx context.Context, p *access.Principal, n *node) error {
	var add, remove []string
	for _, v := range n.now[dns.TypeTXT] {
		if !slices.Contains(n.was[dns.TypeTXT], v) {
			add = append(add, unquote(v))
		}
	}
	for _, v := range n.was[dns.TypeTXT] {
		if !slices.Contains(n.now[dns.TypeTXT], v) {
			remove = append(remove, unquote(v))
		}
	}
	if len(add)+len(remove) == 0 {
		return nil
	}
	if n.host == nil {
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeOther,
			fmt.Sprintf("%s.%s is no hostname; DNS-01 values are published under hostnames", n.label, z.dom.Name))
	}
	return z.u.rules.Certificates.SetChallenges(ctx, p, n.host.ID, add, remove)
}

// commitRecords makes the record calls of n's record types: the records
// the message deleted, then those it added.
func (z *zoneState) commitRecords(ctx context.Context, p *access.Principal, n *node) error {
	if !z.u.profile.Teams() || n.kind != kindHostname && n.kind != kindRecords {
		return nil
	}
	rules := z.u.rules.Records
	for t, vs := range n.was {
		for _, v := range vs {
			if _, ok := recordType(t); !ok || slices.Contains(n.now[t], v) {
				continue
			}
			if err := rules.DeleteRecord(ctx, p, n.host.ID, n.ids[rrKey(t, v)]); err != nil {
				return err
			}
		}
	}
	for t, vs := range n.now {
		for _, v := range vs {
			if _, ok := recordType(t); !ok || slices.Contains(n.was[t], v) {
				continue
			}
			if n.host == nil {
				return reject(dns.RcodeRefused, dns.ExtendedErrorCodeOther,
					fmt.Sprintf("%s is under no hostname of %s; records are published under hostnames", n.name, z.dom.Name))
			}
			in, err := inputOf(n.added[rrKey(t, v)], n.name)
			if err != nil {
				return reject(dns.RcodeRefused, dns.ExtendedErrorCodeNotSupported, err.Error())
			}
			if _, err := rules.CreateRecord(ctx, p, n.host.ID, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// unquote reads a TXT value as rdata gave it: one string, quoted.
func unquote(v string) string {
	return strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`), `" "`, "")
}
