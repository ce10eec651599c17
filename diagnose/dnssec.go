package diagnose

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// checkDNSSEC follows the chain from the parent: the DS the resolvers see
// must match the zone's key, the key must sign itself, and the hostname's
// address RRset must carry a current signature by it.
func checkDNSSEC(ctx context.Context, cfg Config, s Subject) Check {
	if !s.Signed {
		return Check{Verdict: Fail, Detail: "domain " + s.Domain + " is not signed",
			Action: "ask the operator to enable DNSSEC for " + s.Domain + " and publish its DS at the parent"}
	}
	rr, err := dns.NewRR(s.DNSKEY)
	key, ok := rr.(*dns.DNSKEY)
	if err != nil || !ok {
		return Check{Verdict: Unknown, Detail: "the zone's key cannot be read"}
	}
	if len(cfg.Nameservers) == 0 {
		return Check{Verdict: Unknown, Detail: "no nameserver address is configured to ask"}
	}
	ns := cfg.Nameservers[0].Addr
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{s.Domain, dns.TypeDNSKEY}, {s.Name, dns.TypeA}, {s.Name, dns.TypeAAAA}} {
		r, err := ask(ctx, ns, q.name, q.qtype, false, true)
		if err != nil {
			return Check{Verdict: Fail, Detail: fmt.Sprintf("%s %s", cfg.Nameservers[0].Name, inWords(err)),
				Action: "start the nameserver"}
		}
		if why := verify(r, key); why != "" {
			return Check{Verdict: Fail, Detail: fmt.Sprintf("%s %s: %s", q.name, dns.TypeToString[q.qtype], why),
				Action: "check that every node has the same cert_encryption_key_file"}
		}
	}
	ds := key.ToDS(dns.SHA256)
	if len(cfg.Resolvers) == 0 {
		return Check{Verdict: Unknown, Detail: "signatures verify, but no resolver is configured to find the DS at the parent"}
	}
	var silent []string
	for _, res := range cfg.Resolvers {
		r, err := ask(ctx, res.Addr, s.Domain, dns.TypeDS, true, true)
		if err != nil {
			silent = append(silent, fmt.Sprintf("%s %s", res.Label, inWords(err)))
			continue
		}
		for _, rr := range r.Answer {
			if d, ok := rr.(*dns.DS); ok && d.KeyTag == ds.KeyTag && strings.EqualFold(d.Digest, ds.Digest) {
				return Check{Verdict: Pass, Detail: fmt.Sprintf("DS %d at the parent matches the zone's key; signatures verify", ds.KeyTag)}
			}
		}
		return Check{Verdict: Fail, Detail: fmt.Sprintf("%s finds no DS for %s matching key %d", res.Label, s.Domain, ds.KeyTag),
			Action: "publish at the parent: " + ds.String()}
	}
	return Check{Verdict: Unknown, Detail: "signatures verify, but no resolver answered for the DS: " + strings.Join(silent, "; ")}
}

// verify checks the RRSIGs of every RRset in an answer; "" when they hold.
func verify(r *dns.Msg, key *dns.DNSKEY) string {
	sets := map[uint16][]dns.RR{}
	sigs := map[uint16]*dns.RRSIG{}
	for _, rr := range r.Answer {
		// During a key rollover the key set carries a signature by each
		// key: the one by key is what is checked.
		if sig, ok := rr.(*dns.RRSIG); ok && (sigs[sig.TypeCovered] == nil || sig.KeyTag == key.KeyTag()) {
			sigs[sig.TypeCovered] = sig
		} else if !ok {
			sets[rr.Header().Rrtype] = append(sets[rr.Header().Rrtype], rr)
		}
	}
	for t, set := range sets {
		sig := sigs[t]
		if sig == nil {
			return "no signature"
		}
		for _, rr := range set {
			rr.Header().Ttl = sig.OrigTtl
		}
		if err := sig.Verify(key, set); err != nil {
			return "signature does not verify: " + err.Error()
		}
		if !sig.ValidityPeriod(time.Now()) {
			return "signature is not current"
		}
	}
	return ""
}
