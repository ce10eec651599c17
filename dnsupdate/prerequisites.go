package dnsupdate

import (
	"context"
	"fmt"
	"slices"

	"github.com/miekg/dns"
)

// prerequisites checks the prerequisite section (RFC 2136 3.2.5): the
// first that does not hold answers with its rcode, and nothing is written.
func (z *zoneState) prerequisites(ctx context.Context, prs []dns.RR) error {
	want := map[string]map[uint16][]string{} // value-dependent: name -> type -> values
	for _, rr := range prs {
		h := rr.Header()
		n, err := z.at(ctx, h.Name)
		if err != nil {
			return err
		}
		was, err := z.servedAt(ctx, n)
		if err != nil {
			return err
		}
		switch {
		case h.Class == dns.ClassANY && h.Rrtype == dns.TypeANY:
			if !was.inUse() {
				return reject(dns.RcodeNameError, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s is not in use", n.name))
			}
		case h.Class == dns.ClassANY:
			if len(was[h.Rrtype]) == 0 {
				return reject(dns.RcodeNXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s has no %s records", n.name, dns.TypeToString[h.Rrtype]))
			}
		case h.Class == dns.ClassNONE && h.Rrtype == dns.TypeANY:
			if was.inUse() {
				return reject(dns.RcodeYXDomain, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s is in use", n.name))
			}
		case h.Class == dns.ClassNONE:
			if len(was[h.Rrtype]) > 0 {
				return reject(dns.RcodeYXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s has %s records", n.name, dns.TypeToString[h.Rrtype]))
			}
		default:
			if want[n.name] == nil {
				want[n.name] = map[uint16][]string{}
			}
			if v := rdata(rr); !slices.Contains(want[n.name][h.Rrtype], v) {
				want[n.name][h.Rrtype] = append(want[n.name][h.Rrtype], v)
			}
		}
	}
	for name, types := range want {
		for t, vs := range types {
			if !sameSet(z.names[name].served[t], vs) {
				return reject(dns.RcodeNXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: the %s records of %s are not the ones given", dns.TypeToString[t], name))
			}
		}
	}
	return nil
}
