// Package diagnose makes the authoritative report of one hostname: is its
// address served by every nameserver, do the nameservers agree, does the
// zone validate, was a DNS-01 challenge written, does CAA allow the CA, what
// does a certificate-transparency log know, and do resolvers see the same.
//
// Every check asks the real thing (our nameservers, the configured
// resolvers, the CT log) within one shared time budget; what does not answer
// in time is "unknown", never "pass". It knows nothing of HTTP or storage:
// the caller hands it the hostname's state.
package diagnose

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Verdicts.
const (
	Pass    = "pass"
	Fail    = "fail"
	Unknown = "unknown"
)

// Check is one line of the report.
type Check struct {
	ID      string `json:"id"`
	Label   string `json:"label"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail"`
	Action  string `json:"action,omitempty"`
}

// Report is what GET /diagnose answers.
type Report struct {
	Hostname  string
	Summary   string
	Checks    []Check
	CheckedAt time.Time
}

// Nameserver is one of our authoritative servers.
type Nameserver struct {
	Name string // FQDN
	Addr string // host:port
}

// Resolver is a recursive resolver the checks ask.
type Resolver struct {
	Label string // how reports name it: the operator's label, never the address
	Addr  string // host:port
}

// Config is what the checks ask.
type Config struct {
	Nameservers []Nameserver
	Resolvers   []Resolver
	CTLog       string // base URL of a crt.sh-shaped search; "" none
	Budget      time.Duration
}

// Subject is the hostname's state, as the store has it.
type Subject struct {
	Name          string       // FQDN without the trailing dot
	Status        string       // live, pending, expired, released, suspended, terminated
	Addrs         []netip.Addr // what DNS must serve
	Domain        string
	Signed        bool     // the domain is signed
	DNSKEY        string   // its DNSKEY, presentation form
	CA            string   // letsencrypt | google | "" (the caller's own, certificate self)
	ServiceCert   bool     // the service obtains the certificate (csr, managed) and writes its challenges
	CAA           []string // CAA at the hostname: its own records, else the domain's policy (presentation rdata)
	LastChallenge time.Time
}

// The checks, cheapest first (the report's order).
var order = []string{"record", "nameservers", "dns01", "caa", "dnssec", "resolvers", "certificate"}

var labels = map[string]string{
	"state":       "Hostname state",
	"record":      "Address record on every nameserver",
	"nameservers": "Nameservers answer and agree",
	"dns01":       "DNS-01 challenge",
	"caa":         "CAA allows the CA",
	"dnssec":      "DNSSEC validates",
	"resolvers":   "Resolvers see the address",
	"certificate": "Certificate in the transparency log",
}

// budgetSlack: a check that ends this close to the budget's end ended
// because of it.
const budgetSlack = 50 * time.Millisecond

// Run makes the report. Checks run at once, each bounded by the shared
// budget; a check that runs out is unknown.
func Run(ctx context.Context, cfg Config, s Subject) *Report {
	r := &Report{Hostname: s.Name, CheckedAt: time.Now()}
	if c := stateCheck(s); c != nil {
		r.Checks = []Check{*c}
		r.Summary = fmt.Sprintf("%s is %s: nothing else is checked", s.Name, s.Status)
		return r
	}
	budget := cfg.Budget
	if budget <= 0 {
		budget = 4 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	deadline, _ := ctx.Deadline()
	run := map[string]func(context.Context, Config, Subject) Check{
		"record": checkRecord, "nameservers": checkNameservers, "dns01": checkDNS01, "caa": checkCAA,
		"dnssec": checkDNSSEC, "resolvers": checkResolvers, "certificate": checkCertificate,
	}
	results := make([]Check, len(order))
	var wg sync.WaitGroup
	for i, id := range order {
		done := make(chan Check, 1)
		go func() { done <- run[id](ctx, cfg, s) }()
		wg.Go(func() {
			outOfTime := Check{Verdict: Unknown, Detail: "the check ran out of its time budget (" + budget.String() + ")"}
			select {
			case c := <-done:
				// A query cut off by the budget's deadline is not a failure:
				// its socket deadline may fire a moment before ctx reports it.
				if c.Verdict != Pass && time.Until(deadline) < budgetSlack {
					c = outOfTime
				}
				results[i] = c
			case <-ctx.Done():
				results[i] = outOfTime
			}
			results[i].ID, results[i].Label = id, labels[id]
			if results[i].Verdict == Pass {
				results[i].Action = "" // never an action on a pass
			}
		})
	}
	wg.Wait()
	r.Checks = results
	r.Summary = summary(s.Name, results)
	return r
}

func summary(name string, cs []Check) string {
	var fails, unknowns []string
	for _, c := range cs {
		switch c.Verdict {
		case Fail:
			fails = append(fails, c.ID)
		case Unknown:
			unknowns = append(unknowns, c.ID)
		}
	}
	switch {
	case len(fails) > 0:
		return fmt.Sprintf("%s: %d of %d checks fail (%s)", name, len(fails), len(cs), strings.Join(fails, ", "))
	case len(unknowns) > 0:
		return fmt.Sprintf("%s: no check fails; %d could not tell (%s)", name, len(unknowns), strings.Join(unknowns, ", "))
	}
	return fmt.Sprintf("%s: all %d checks pass", name, len(cs))
}

// stateCheck is the first and only check of a hostname that is not served.
func stateCheck(s Subject) *Check {
	c := &Check{ID: "state", Label: labels["state"], Verdict: Fail}
	switch s.Status {
	case "released":
		c.Detail, c.Action = s.Name+" was released and is not served", "register a new hostname"
	case "suspended":
		c.Detail, c.Action = s.Name+" is suspended while an abuse report is reviewed and is not served", "contact the operator about the report"
	case "terminated":
		c.Detail = s.Name + " was terminated after an abuse review; it is not served and cannot come back"
	case "expired":
		c.Detail, c.Action = s.Name+" expired after a week without authenticated use and is not served", "renew it (POST .../renew) or PUT its address"
	default:
		return nil
	}
	return c
}
