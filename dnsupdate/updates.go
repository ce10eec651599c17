package dnsupdate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/records"
	"github.com/miekg/dns"
)

// The update section, applied to the state in order: what each name may
// take (writable), then each RR's addition or deletion.

// writable says which types an update may touch at n, and why not.
func (z *zoneState) writable(n *node, t uint16) error {
	_, record := recordType(t)
	switch {
	case z.u.profile.Teams() && record && (n.kind == kindHostname || n.kind == kindRecords):
		return nil
	case n.kind == kindRecords && t == dns.TypeANY:
		return nil
	case n.kind == kindHostname && (t == dns.TypeA || t == dns.TypeAAAA || t == dns.TypeDHCID || t == dns.TypeANY):
		return nil
	case n.kind == kindChallenge && (t == dns.TypeTXT || t == dns.TypeANY):
		return nil
	case n.kind == kindApex:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("the apex of %s is not written by UPDATE", z.dom.Name))
	case n.kind == kindHostname && z.u.profile.Teams():
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes A and AAAA (its address), DHCID and %s records, not %s",
			n.name, strings.Join(records.Types, ", "), dns.TypeToString[t]))
	case n.kind == kindRecords:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes %s records, not %s",
			n.name, strings.Join(records.Types, ", "), dns.TypeToString[t]))
	case n.kind == kindHostname:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes A and AAAA (its address) and DHCID by UPDATE, not %s", n.name, dns.TypeToString[t]))
	case n.kind == kindChallenge:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes TXT (DNS-01 values), not %s", n.name, dns.TypeToString[t]))
	}
	return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited,
		fmt.Sprintf("%s is neither a hostname (a label directly under %s) nor its %s name", n.name, z.dom.Name, records.ChallengeLabel))
}

// update applies one update RR to the state (RFC 2136 3.4.2).
func (z *zoneState) update(ctx context.Context, rr dns.RR) error {
	h := rr.Header()
	n, err := z.at(ctx, h.Name)
	if err != nil {
		return err
	}
	if err := z.writable(n, h.Rrtype); err != nil {
		return err
	}
	n.dirty = true
	switch h.Class {
	case dns.ClassINET: // add, unless there already
		if v := rdata(rr); !slices.Contains(n.now[h.Rrtype], v) {
			n.now[h.Rrtype] = append(n.now[h.Rrtype], v)
			if n.added == nil {
				n.added = map[string]dns.RR{}
			}
			n.added[rrKey(h.Rrtype, v)] = rr
		}
	case dns.ClassANY: // delete an RRset, or every RRset at the name
		if h.Rrtype == dns.TypeANY {
			n.now = rrsets{}
		} else {
			delete(n.now, h.Rrtype)
		}
	case dns.ClassNONE: // delete one record, if there
		v := rdata(rr)
		n.now[h.Rrtype] = slices.DeleteFunc(n.now[h.Rrtype], func(s string) bool { return s == v })
	}
	return nil
}
