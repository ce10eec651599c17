package hostname

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// option is one line of the hostname block: its name, the syntax of its
// arguments as the README's Syntax block shows it (a test holds the two
// together), what it is for, how many arguments it takes (max -1: any
// number) and how it sets them on the configuration.
type option struct {
	name, syntax, doc string
	min, max          int
	set               func(cfg *config, args []string) error
}

// options are the hostname block's options, in the README's order.
var options = []option{
	{"profile", "1|2", "the behaviour profile of the specification", 1, 1, func(cfg *config, a []string) error {
		if a[0] != "1" && a[0] != "2" {
			return fmt.Errorf("must be 1 or 2, got %q", a[0])
		}
		cfg.app.Profile, _ = strconv.Atoi(a[0])
		return nil
	}},
	{"storage", "sqlite PATH | storage postgres DSN [readonly]", "where state lives; readonly: a DNS-only node on a copy (a hot standby)", 2, 3, func(cfg *config, a []string) error {
		d := storage.Dialect(a[0])
		if d != storage.SQLite && d != storage.Postgres {
			return fmt.Errorf("must be sqlite PATH or postgres DSN, got %q", a[0])
		}
		if len(a) == 3 {
			if a[2] != "readonly" || d != storage.Postgres {
				return fmt.Errorf("the third argument can only be readonly, after postgres DSN, got %q", a[2])
			}
			cfg.app.ReadOnly = true
		}
		cfg.app.Dialect, cfg.app.DSN = d, a[1]
		return nil
	}},
	{"api", "ADDRESS", "the HTTP API's listen address (a read-only node: GET /api/health only, none without this line)", 1, 1, func(cfg *config, a []string) error {
		if _, _, err := net.SplitHostPort(a[0]); err != nil {
			return fmt.Errorf("%q is not HOST:PORT", a[0])
		}
		cfg.app.API = a[0]
		return nil
	}},
	{"max_lag", "DURATION", "how far behind its writers the node may fall before it reports not ready", 1, 1,
		duration(func(c *config) *time.Duration { return &c.app.MaxLag }, 0)},
	{"base_url", "URL", "the service origin as callers see it", 1, 1, func(cfg *config, a []string) error {
		if err := httpURL(a[0]); err != nil {
			return err
		}
		cfg.app.BaseURL = strings.TrimSuffix(a[0], "/")
		return nil
	}},
	{"admin_token_file", "PATH", "the admin bearer token (written with a random one when missing)", 1, 1, text(func(c *config) *string { return &c.app.AdminTokenFile })},
	{"domain", "DOMAIN...", "a domain to serve, created in the store when missing", 1, -1, func(cfg *config, a []string) error {
		for _, s := range a {
			d := domains.Normalize(s)
			if d == "" {
				return fmt.Errorf("%q is not a domain name", s)
			}
			cfg.app.Domains = append(cfg.app.Domains, d)
		}
		return nil
	}},
	{"nameserver", "NAME [ADDRESS]", "an authoritative nameserver of the domains, and where it answers", 1, 2, func(cfg *config, a []string) error {
		name := domains.Normalize(a[0])
		if name == "" {
			return fmt.Errorf("%q is not a host name", a[0])
		}
		ns := app.Nameserver{Name: dns.Fqdn(name)}
		if len(a) == 2 {
			addr, err := hostPort(a[1])
			if err != nil {
				return fmt.Errorf("%s: %w", a[0], err)
			}
			ns.Addr = addr
		}
		cfg.app.Nameservers = append(cfg.app.Nameservers, ns)
		return nil
	}},
	{"idle_expiry", "DURATION", "[P1] how long a hostname lives without authenticated use", 1, 1, duration(func(c *config) *time.Duration { return &c.app.IdleExpiry }, 0)},
	{"address_ttl", "SECONDS", "the TTL of A and AAAA answers", 1, 1, func(cfg *config, a []string) error {
		n, err := strconv.ParseUint(a[0], 10, 32)
		if err != nil || n == 0 || n > 86400 {
			return fmt.Errorf("%q is not 1..86400 seconds", a[0])
		}
		cfg.addressTTL = uint32(n)
		return nil
	}},
	{"plan_cap", "PLAN COUNT", "the active-hostname cap of a plan", 2, 2, func(cfg *config, a []string) error {
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 0 {
			return fmt.Errorf("%s: %q is not a count", a[0], a[1])
		}
		cfg.app.Caps[a[0]] = n
		return nil
	}},
	{"blocked_labels", "PATH", "[P1] a file of labels nobody may register", 1, 1, text(func(c *config) *string { return &c.app.BlockedLabels })},
	{"feed_poll", "DURATION", "how often the change feed polls besides being woken", 1, 1, duration(func(c *config) *time.Duration { return &c.app.FeedPoll }, 0)},
	{"acme_ca", "letsencrypt|google DIRECTORY_URL [ROOT_PEM_FILE]", "an ACME CA the service orders certificates from", 2, 3, func(cfg *config, a []string) error {
		if !slices.Contains(app.CANames, a[0]) {
			return fmt.Errorf("name must be %s, got %q", strings.Join(app.CANames, " or "), a[0])
		}
		if err := httpURL(a[1]); err != nil {
			return fmt.Errorf("%s: %w", a[0], err)
		}
		ca := app.ACMECA{Directory: a[1]}
		if len(a) == 3 {
			ca.Root = a[2]
		}
		cfg.app.ACMECAs[a[0]] = ca
		return nil
	}},
	{"acme_eab", "letsencrypt|google KID HMAC", "the external account binding of a configured CA", 3, 3, func(cfg *config, a []string) error {
		ca, ok := cfg.app.ACMECAs[a[0]]
		if !ok {
			return fmt.Errorf("%s: no acme_ca %s before it", a[0], a[0])
		}
		ca.EABKid, ca.EABHMAC = a[1], a[2]
		cfg.app.ACMECAs[a[0]] = ca
		return nil
	}},
	{"acme_email", "EMAIL", "the contact of the ACME accounts", 1, 1, text(func(c *config) *string { return &c.app.ACMEEmail })},
	{"cert_renew_at", "FRACTION", "[P2] the fraction of a certificate's life after which it is renewed", 1, 1, func(cfg *config, a []string) error {
		f, err := strconv.ParseFloat(a[0], 64)
		if err != nil || f <= 0 || f >= 1 {
			return fmt.Errorf("%q is not a fraction between 0 and 1", a[0])
		}
		cfg.app.CertRenewAt = f
		return nil
	}},
	{"record_write_per_minute", "COUNT", "[P2] record writes a team may make a minute", 1, 1, count(func(c *config) *int { return &c.app.RecordWrites })},
	// Below the API's 10 s bound on a request.
	{"diagnose_budget", "DURATION", "[P2] the time one diagnose report may take", 1, 1, duration(func(c *config) *time.Duration { return &c.app.DiagnoseBudget }, 8*time.Second)},
	{"diagnose_per_minute", "COUNT", "[P2] diagnose reports a team may ask for a minute", 1, 1, count(func(c *config) *int { return &c.app.Diagnoses })},
	{"cert_encryption_key_file", "PATH", "the key that seals DNSSEC and certificate private keys", 1, 1, text(func(c *config) *string { return &c.app.CertKeyFile })},
	{"resolver", "[LABEL=]ADDRESS...", "[P2] recursive resolvers for targets and diagnose", 1, -1, func(cfg *config, a []string) error {
		for _, s := range a {
			label, addr, labelled := strings.Cut(s, "=")
			if !labelled {
				addr, label = s, ""
			}
			if err := addrs(func(c *config) *[]string { return &c.app.Resolvers })(cfg, []string{addr}); err != nil {
				return err
			}
			if label != "" {
				if cfg.app.ResolverLabels == nil {
					cfg.app.ResolverLabels = map[string]string{}
				}
				cfg.app.ResolverLabels[cfg.app.Resolvers[len(cfg.app.Resolvers)-1]] = label
			}
		}
		return nil
	}},
	{"ct_log", "URL", "[P2] the certificate transparency log diagnose reads", 1, 1, func(cfg *config, a []string) error {
		if err := httpURL(a[0]); err != nil {
			return err
		}
		cfg.app.CTLog = a[0]
		return nil
	}},
	// Repeatable, so a long list may be split over lines.
	{"trusted_proxy", "CIDR...", "reverse proxies whose X-Forwarded-For names the client", 1, -1, func(cfg *config, a []string) error {
		for _, s := range a {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return fmt.Errorf("%q is not a CIDR (such as 10.0.0.0/8 or 127.0.0.1/32)", s)
			}
			cfg.app.TrustedProxies = append(cfg.app.TrustedProxies, p.Masked())
		}
		return nil
	}},
	{"audit_retention", "DURATION", "how long audit entries are kept", 1, 1, func(cfg *config, a []string) error {
		d, err := time.ParseDuration(a[0])
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration", a[0])
		}
		if d < time.Hour {
			return fmt.Errorf("%s is less than an hour", d)
		}
		cfg.app.AuditRetention = d
		return nil
	}},
	// A change feed kept for less than a minute would drop changes a
	// node's next poll still asks for; fewer than 1 000 ids, those of a
	// burst of writes.
	{"change_retention", "DURATION [COUNT]", "what the compacted change feed keeps", 1, 2, func(cfg *config, a []string) error {
		d, err := time.ParseDuration(a[0])
		if err != nil || d < time.Minute {
			return fmt.Errorf("%q is not a duration of at least 1m", a[0])
		}
		cfg.app.Changes.Age = d
		if len(a) == 2 {
			n, err := strconv.ParseInt(a[1], 10, 64)
			if err != nil || n < 1000 {
				return fmt.Errorf("%q is not a count of at least 1000", a[1])
			}
			cfg.app.Changes.Count = n
		}
		return nil
	}},
	{"target_resolver", "ADDRESS...", "[P2] recursive resolvers for targets only (default: resolver)", 1, -1,
		addrs(func(c *config) *[]string { return &c.app.TargetResolvers })},
	{"target_names", "allow|deny SUFFIX...", "[P2] the names a target may follow", 2, -1, func(cfg *config, a []string) error {
		var list *[]string
		switch a[0] {
		case "allow":
			list = &cfg.app.TargetAllow
		case "deny":
			list = &cfg.app.TargetDeny
		default:
			return fmt.Errorf("want allow or deny, got %q", a[0])
		}
		for _, s := range a[1:] {
			// A suffix may be one label (internal): checked as a name under it.
			d := domains.Normalize("x." + strings.TrimPrefix(s, "."))
			if d == "" {
				return fmt.Errorf("%q is not a domain suffix", s)
			}
			*list = append(*list, strings.TrimPrefix(d, "x."))
		}
		return nil
	}},
	{"fast_udp", "[SOCKETS]", "answer names' queries over UDP from sockets of the plugin's own, in batches", 0, 1, func(cfg *config, a []string) error {
		cfg.fastUDP = true
		if len(a) == 1 {
			n, err := strconv.Atoi(a[0])
			if err != nil || n < 1 || n > 64 {
				return fmt.Errorf("%q is not a count of sockets from 1 to 64", a[0])
			}
			cfg.fastSockets = n
		}
		return nil
	}},
	{"response_rate_limit", "RESPONSES_PER_SECOND [SLIP] [nxdomains COUNT] [errors COUNT]",
		"responses a second over UDP per client network and response", 1, 6, func(cfg *config, a []string) error {
			n, err := strconv.Atoi(a[0])
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive count of answers a second", a[0])
			}
			cfg.rrlRate, cfg.rrlSlip = n, 2
			rest := a[1:]
			if len(rest)%2 == 1 {
				if cfg.rrlSlip, err = strconv.Atoi(rest[0]); err != nil || cfg.rrlSlip < 0 || cfg.rrlSlip > 10 {
					return fmt.Errorf("slip %q is not 0 (drop all) to 10", rest[0])
				}
				rest = rest[1:]
			}
			for ; len(rest) > 0; rest = rest[2:] {
				var limit *int
				switch rest[0] {
				case "nxdomains":
					limit = &cfg.rrlNXDomains
				case "errors":
					limit = &cfg.rrlErrors
				default:
					return fmt.Errorf("%q is not nxdomains or errors", rest[0])
				}
				if *limit, err = strconv.Atoi(rest[1]); err != nil || *limit < 1 {
					return fmt.Errorf("%s %q is not a positive count a second", rest[0], rest[1])
				}
			}
			return nil
		}},
	{"dynamic_update", "", "take DNS UPDATE (RFC 2136) signed with the store's TSIG keys", 0, 0, func(cfg *config, a []string) error {
		cfg.app.DynamicUpdate = true
		return nil
	}},
	{"acme_update_per_minute", "COUNT", "acme-dns updates a credential may make a minute", 1, 1, count(func(c *config) *int { return &c.app.ACMEUpdates })},
	{"soa", "RNAME [REFRESH RETRY EXPIRE MINIMUM]", "every served zone's SOA contact mailbox and timers", 1, 5, func(cfg *config, a []string) error {
		v, err := served.ParseSOA(a)
		cfg.app.SOA = v
		return err
	}},
	{"acme_dns_domain", "NAME", "make acme-dns registrations for any domain under NAME, a domain or a name below one", 1, 1, func(cfg *config, a []string) error {
		name := domains.Normalize(a[0])
		if name == "" {
			return fmt.Errorf("%q is not a domain name", a[0])
		}
		cfg.app.ACMEDNSDomain = name
		return nil
	}},
	{"catalog", "ZONE", "serve an RFC 9432 catalog zone of the domains secondaries can transfer", 1, 1, func(cfg *config, a []string) error {
		name := domains.Normalize(a[0])
		if name == "" {
			return fmt.Errorf("%q is not a zone name", a[0])
		}
		cfg.catalog = dns.Fqdn(name)
		return nil
	}},
}

// text sets an option's one argument as it is.
func text(field func(*config) *string) func(*config, []string) error {
	return func(cfg *config, a []string) error {
		*field(cfg) = a[0]
		return nil
	}
}

// addrs appends IP[:PORT] arguments (port 53 by default) as HOST:PORT.
func addrs(field func(*config) *[]string) func(*config, []string) error {
	return func(cfg *config, a []string) error {
		for _, s := range a {
			addr, err := hostPort(s)
			if err != nil {
				return err
			}
			*field(cfg) = append(*field(cfg), addr)
		}
		return nil
	}
}

// count sets a positive count.
func count(field func(*config) *int) func(*config, []string) error {
	return func(cfg *config, a []string) error {
		n, err := strconv.Atoi(a[0])
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive count", a[0])
		}
		*field(cfg) = n
		return nil
	}
}

// duration sets a positive duration, at most upTo unless that is 0.
func duration(field func(*config) *time.Duration, upTo time.Duration) func(*config, []string) error {
	return func(cfg *config, a []string) error {
		d, err := time.ParseDuration(a[0])
		if err != nil || d <= 0 || upTo > 0 && d > upTo {
			if upTo > 0 {
				return fmt.Errorf("%q is not a duration up to %s", a[0], upTo)
			}
			return fmt.Errorf("%q is not a positive duration", a[0])
		}
		*field(cfg) = d
		return nil
	}
}

// parseOption reads the option under c's cursor into cfg.
func parseOption(c *caddy.Controller, cfg *config) error {
	name, args := c.Val(), c.RemainingArgs()
	for _, o := range options {
		if o.name != name {
			continue
		}
		if len(args) < o.min || o.max >= 0 && len(args) > o.max {
			return c.Errf("%s takes %s: %s", name, o.syntax, o.doc)
		}
		if err := o.set(cfg, args); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cfg.given[name] = true
		return nil
	}
	return c.Errf("unknown property %q", name)
}

// httpURL checks that s is an absolute http(s) URL.
func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// hostPort reads IP[:PORT] (port 53 when absent) as HOST:PORT.
func hostPort(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, "53"
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return "", fmt.Errorf("%q is not IP[:PORT]", s)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return "", fmt.Errorf("%q has no valid port", s)
	}
	return net.JoinHostPort(host, port), nil
}
