package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/nsprobe"

	"github.com/miekg/dns"
)

// ask sends one query; rd asks for recursion (resolvers), do for DNSSEC.
func ask(ctx context.Context, server, name string, qtype uint16, rd, do bool) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = rd
	m.SetEdns0(1232, do)
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, server)
	}
	return r, err
}

// served asks server for name's A and AAAA records.
func served(ctx context.Context, server, name string, rd bool) ([]netip.Addr, error) {
	var all []netip.Addr
	for _, t := range []uint16{dns.TypeA, dns.TypeAAAA} {
		r, err := ask(ctx, server, name, t, rd, false)
		if err != nil {
			return nil, err
		}
		if r.Rcode != dns.RcodeSuccess {
			return nil, fmt.Errorf("%w %s", errAnswered, dns.RcodeToString[r.Rcode])
		}
		all = append(all, nsprobe.Addrs(r.Answer)...)
	}
	slices.SortFunc(all, netip.Addr.Compare)
	return all, nil
}

func want(s Subject) []netip.Addr {
	w := slices.Clone(s.Addrs)
	slices.SortFunc(w, netip.Addr.Compare)
	return w
}

func checkRecord(ctx context.Context, cfg Config, s Subject) Check {
	var bad []string
	for _, ns := range cfg.Nameservers {
		got, err := served(ctx, ns.Addr, s.Name, false)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s %s", ns.Name, inWords(err)))
		case !slices.Equal(got, want(s)):
			bad = append(bad, fmt.Sprintf("%s serves %v", ns.Name, got))
		}
	}
	if len(cfg.Nameservers) == 0 {
		return Check{Verdict: Unknown, Detail: "no nameserver address is configured to ask"}
	}
	if len(bad) > 0 {
		return Check{Verdict: Fail, Detail: fmt.Sprintf("want %v; %s", want(s), strings.Join(bad, "; ")),
			Action: "make sure every nameserver runs and shares the store; a change reaches every node within a second"}
	}
	return Check{Verdict: Pass, Detail: fmt.Sprintf("%d nameserver(s) serve %v", len(cfg.Nameservers), want(s))}
}

func checkNameservers(ctx context.Context, cfg Config, s Subject) Check {
	serials := map[uint32][]string{}
	var bad []string
	for _, ns := range cfg.Nameservers {
		r, err := ask(ctx, ns.Addr, s.Domain, dns.TypeSOA, false, false)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s %s", ns.Name, inWords(err)))
		case !r.Authoritative || len(r.Answer) == 0:
			bad = append(bad, ns.Name+" does not answer authoritatively for "+s.Domain)
		default:
			if soa, ok := r.Answer[0].(*dns.SOA); ok {
				serials[soa.Serial] = append(serials[soa.Serial], ns.Name)
			}
		}
	}
	if len(cfg.Nameservers) == 0 {
		return Check{Verdict: Unknown, Detail: "no nameserver address is configured to ask"}
	}
	if len(bad) > 0 {
		return Check{Verdict: Fail, Detail: strings.Join(bad, "; "), Action: "start the nameservers that do not answer"}
	}
	if len(serials) > 1 {
		return Check{Verdict: Fail, Detail: fmt.Sprintf("SOA serials differ: %v", serials),
			Action: "a node is behind: check that every node reaches the database"}
	}
	return Check{Verdict: Pass, Detail: fmt.Sprintf("%d nameserver(s) answer authoritatively with one SOA serial", len(cfg.Nameservers))}
}

func checkDNS01(_ context.Context, _ Config, s Subject) Check {
	if s.LastChallenge.IsZero() && s.ServiceCert {
		return Check{Verdict: Fail, Detail: "the service runs this hostname's certificate but never wrote a DNS-01 challenge for it",
			Action: "read GET .../certificate for the order's state and error"}
	}
	if s.LastChallenge.IsZero() {
		return Check{Verdict: Unknown, Detail: "no DNS-01 challenge value was ever written for " + s.Name,
			Action: "if your ACME client uses DNS-01, create a credential (POST .../acme-credential) and give it to the client"}
	}
	return Check{Verdict: Pass, Detail: "the last DNS-01 challenge value was written at " +
		s.LastChallenge.UTC().Format("2006-01-02T15:04:05.000Z")}
}

func checkCAA(_ context.Context, _ Config, s Subject) Check {
	if len(s.CAA) == 0 {
		return Check{Verdict: Pass, Detail: "no CAA record: any CA may issue"}
	}
	var issuers []string
	for _, c := range s.CAA {
		f := strings.Fields(c)
		if len(f) >= 3 && (f[1] == "issue") {
			v := strings.Trim(strings.Join(f[2:], " "), `"`)
			issuers = append(issuers, strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
		}
	}
	if len(issuers) == 0 {
		return Check{Verdict: Pass, Detail: "CAA holds no issue tag: any CA may issue"}
	}
	domain := certs.CAAIdentity(s.CA)
	if domain == "" {
		return Check{Verdict: Unknown, Detail: fmt.Sprintf("CAA allows only %v; the CA your own client uses is not known here", issuers),
			Action: "make sure your CA is one of " + strings.Join(issuers, ", ")}
	}
	if slices.Contains(issuers, domain) {
		return Check{Verdict: Pass, Detail: fmt.Sprintf("CAA allows %s (%s)", domain, s.CA)}
	}
	return Check{Verdict: Fail, Detail: fmt.Sprintf("CAA allows only %v, which refuses %s (%s)", issuers, domain, s.CA),
		Action: fmt.Sprintf("add a CAA record `0 issue \"%s\"` to the hostname, or ask the operator to allow it in the domain policy", domain)}
}

func checkResolvers(ctx context.Context, cfg Config, s Subject) Check {
	if len(cfg.Resolvers) == 0 {
		return Check{Verdict: Unknown, Detail: "no resolver is configured to ask"}
	}
	var bad, silent []string
	for _, r := range cfg.Resolvers {
		got, err := served(ctx, r.Addr, s.Name, true)
		switch {
		case err != nil:
			silent = append(silent, fmt.Sprintf("%s %s", r.Label, inWords(err)))
		case !slices.Equal(got, want(s)):
			bad = append(bad, fmt.Sprintf("%s sees %v", r.Label, got))
		}
	}
	switch {
	case len(bad) > 0:
		return Check{Verdict: Fail, Detail: fmt.Sprintf("want %v; %s", want(s), strings.Join(bad, "; ")),
			Action: "resolvers may hold an older answer until its TTL (60 s) runs out; check the delegation of " + s.Domain + " if it lasts"}
	case len(silent) > 0:
		return Check{Verdict: Unknown, Detail: "a resolver did not answer: " + strings.Join(silent, "; ")}
	}
	return Check{Verdict: Pass, Detail: fmt.Sprintf("%d resolver(s) see %v", len(cfg.Resolvers), want(s))}
}

// ctClient reads the CT log: within the report's budget, and never more
// than ctMaxBody of an answer (a log that streams without end would hold
// the report and the memory).
var ctClient = &http.Client{Timeout: 5 * time.Second}

const ctMaxBody = 8 << 20

// ctEntry is one row of a crt.sh-shaped JSON answer.
type ctEntry struct {
	IssuerName string `json:"issuer_name"`
	CommonName string `json:"common_name"`
	NameValue  string `json:"name_value"`
	NotBefore  string `json:"not_before"`
	NotAfter   string `json:"not_after"`
}

func checkCertificate(ctx context.Context, cfg Config, s Subject) Check {
	if cfg.CTLog == "" {
		return Check{Verdict: Unknown, Detail: "no certificate-transparency log is configured to ask"}
	}
	u := strings.TrimSuffix(cfg.CTLog, "/") + "/?output=json&q=" + url.QueryEscape(s.Name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Check{Verdict: Unknown, Detail: err.Error()}
	}
	resp, err := ctClient.Do(req)
	if err != nil {
		return Check{Verdict: Unknown, Detail: "the CT log " + inWords(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, ctMaxBody+1))
	if err != nil {
		return Check{Verdict: Unknown, Detail: "the CT log " + inWords(err)}
	}
	if len(body) > ctMaxBody {
		return Check{Verdict: Unknown, Detail: fmt.Sprintf("the CT log answered more than %d MB", ctMaxBody>>20)}
	}
	var entries []ctEntry
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &entries) != nil {
		return Check{Verdict: Unknown, Detail: fmt.Sprintf("the CT log answered %s, not a JSON list", resp.Status)}
	}
	var latest *ctEntry
	var latestAt time.Time
	for i := range entries {
		at, err := parseCTTime(entries[i].NotBefore)
		if err == nil && (latest == nil || at.After(latestAt)) {
			latest, latestAt = &entries[i], at
		}
	}
	if latest == nil {
		return Check{Verdict: Fail, Detail: "the CT log knows no certificate for " + s.Name,
			Action: "obtain a certificate (DNS-01 through this service, or certificate managed/csr)"}
	}
	expiry, _ := parseCTTime(latest.NotAfter)
	detail := fmt.Sprintf("latest certificate from %s, valid %s to %s", latest.IssuerName, latest.NotBefore, latest.NotAfter)
	if !expiry.IsZero() && expiry.Before(time.Now()) {
		return Check{Verdict: Fail, Detail: detail + ": expired", Action: "renew the certificate"}
	}
	return Check{Verdict: Pass, Detail: detail}
}

func parseCTTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05", time.RFC3339, "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}
