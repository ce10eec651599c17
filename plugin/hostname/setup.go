package hostname

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hostmint/hostmint/diagnose"

	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/certs"

	"github.com/hostmint/hostmint/seal"

	"github.com/hostmint/hostmint/nsprobe"
	"github.com/hostmint/hostmint/targets"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/dashboard"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin("hostname")

func init() { plugin.Register("hostname", setup) }

// config is the parsed hostname block.
type config struct {
	profile        int
	dialect        storage.Dialect
	dsn            string
	api            string
	baseURL        string
	adminTokenFile string
	domains        []string // lowercase, no trailing dot
	nameservers    []nameserver
	idleExpiry     time.Duration
	addressTTL     uint32
	caps           map[string]int
	blockedLabels  string
	feedPoll       time.Duration
	recordWrites   int                     // [P2] recordWritePerMinute
	acmeUpdates    int                     // acme-dns updates a minute per credential
	certRenewAt    float64                 // [P2] fraction of a managed certificate's life after which it is renewed
	diagnoseBudget time.Duration           // [P2] the time one diagnose report may take
	diagnoses      int                     // [P2] diagnose reports a minute per team
	trustedProxies []netip.Prefix          // peers whose X-Forwarded-For names the client
	auditRetention time.Duration           // how long audit entries are kept
	changes        storage.ChangeRetention // which changes the compacted feed keeps

	// Read and checked now; used by the certificate and diagnose features.
	acmeCAs     map[string]acmeCA
	acmeEmail   string
	certKeyFile string
	resolvers   []string
	ctLog       string
}

type nameserver struct {
	name string // FQDN, lowercase
	addr string // host:port where it answers; "" if not given
}

type acmeCA struct {
	directory       string
	root            string
	eabKid, eabHMAC string // external account binding, for CAs that need it
}

func defaults() *config {
	caps := map[string]int{}
	for k, v := range hostnames.DefaultCaps {
		caps[k] = v
	}
	return &config{
		profile:        1,
		dialect:        storage.SQLite,
		dsn:            "./data/hostmint.db",
		api:            "127.0.0.1:8080",
		adminTokenFile: "./data/admin.token",
		idleExpiry:     7 * 24 * time.Hour,
		addressTTL:     60,
		caps:           caps,
		feedPoll:       time.Second,
		auditRetention: audit.DefaultRetention,
		changes:        storage.DefaultChangeRetention,
		acmeCAs:        map[string]acmeCA{},
	}
}

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error("hostname", err)
	}
	h := newHostname(cfg)
	c.OnStartup(h.start)
	c.OnShutdown(h.stop)
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	return nil
}

func newHostname(cfg *config) *Hostname {
	h := &Hostname{cfg: cfg, index: NewIndex(), static: map[string]addrList{}}
	for _, ns := range cfg.nameservers {
		h.ns = append(h.ns, ns.name)
		if ns.addr == "" {
			continue
		}
		host, _, _ := net.SplitHostPort(ns.addr)
		if a, err := netip.ParseAddr(host); err == nil {
			h.static[ns.name] += packAddrs([]netip.Addr{a})
		}
	}
	return h
}

// parse reads the hostname block of c (one per server block).
func parse(c *caddy.Controller) (*config, error) {
	cfg := defaults()
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, plugin.ErrOnce
		}
		if len(c.RemainingArgs()) > 0 {
			return nil, c.ArgErr()
		}
		for c.NextBlock() {
			if err := parseOption(c, cfg); err != nil {
				return nil, err
			}
		}
	}
	if len(cfg.nameservers) == 0 {
		return nil, fmt.Errorf("at least one nameserver is required (nameserver NAME [ADDR])")
	}
	if cfg.baseURL == "" {
		cfg.baseURL = "http://" + cfg.api
	}
	return cfg, nil
}

func parseOption(c *caddy.Controller, cfg *config) error {
	opt := c.Val()
	args := c.RemainingArgs()
	need := func(min, max int) error {
		if len(args) < min || max >= 0 && len(args) > max {
			return c.ArgErr()
		}
		return nil
	}
	// Options whose one argument is taken as it is.
	text := map[string]*string{
		"admin_token_file":         &cfg.adminTokenFile,
		"blocked_labels":           &cfg.blockedLabels,
		"acme_email":               &cfg.acmeEmail,
		"cert_encryption_key_file": &cfg.certKeyFile,
	}
	if p, ok := text[opt]; ok {
		if err := need(1, 1); err != nil {
			return err
		}
		*p = args[0]
		return nil
	}
	switch opt {
	case "profile":
		if err := need(1, 1); err != nil {
			return err
		}
		if args[0] != "1" && args[0] != "2" {
			return fmt.Errorf("profile must be 1 or 2, got %q", args[0])
		}
		cfg.profile, _ = strconv.Atoi(args[0])
	case "storage":
		if err := need(2, 2); err != nil {
			return err
		}
		switch storage.Dialect(args[0]) {
		case storage.SQLite, storage.Postgres:
			cfg.dialect, cfg.dsn = storage.Dialect(args[0]), args[1]
		default:
			return fmt.Errorf("storage must be sqlite PATH or postgres DSN, got %q", args[0])
		}
	case "api":
		if err := need(1, 1); err != nil {
			return err
		}
		if _, _, err := net.SplitHostPort(args[0]); err != nil {
			return fmt.Errorf("api: %q is not HOST:PORT", args[0])
		}
		cfg.api = args[0]
	case "base_url":
		if err := need(1, 1); err != nil {
			return err
		}
		if err := httpURL(args[0]); err != nil {
			return fmt.Errorf("base_url: %w", err)
		}
		cfg.baseURL = strings.TrimSuffix(args[0], "/")
	case "ct_log":
		if err := need(1, 1); err != nil {
			return err
		}
		if err := httpURL(args[0]); err != nil {
			return fmt.Errorf("ct_log: %w", err)
		}
		cfg.ctLog = args[0]
	case "domain":
		if err := need(1, -1); err != nil {
			return err
		}
		for _, a := range args {
			d := domains.Normalize(a)
			if d == "" {
				return fmt.Errorf("domain: %q is not a domain name", a)
			}
			cfg.domains = append(cfg.domains, d)
		}
	case "nameserver":
		if err := need(1, 2); err != nil {
			return err
		}
		name := domains.Normalize(args[0])
		if name == "" {
			return fmt.Errorf("nameserver: %q is not a host name", args[0])
		}
		ns := nameserver{name: dns.Fqdn(name)}
		if len(args) == 2 {
			addr, err := hostPort(args[1])
			if err != nil {
				return fmt.Errorf("nameserver %s: %w", args[0], err)
			}
			ns.addr = addr
		}
		cfg.nameservers = append(cfg.nameservers, ns)
	case "resolver":
		if err := need(1, -1); err != nil {
			return err
		}
		for _, a := range args {
			addr, err := hostPort(a)
			if err != nil {
				return fmt.Errorf("resolver: %w", err)
			}
			cfg.resolvers = append(cfg.resolvers, addr)
		}
	case "idle_expiry", "feed_poll", "audit_retention":
		if err := need(1, 1); err != nil {
			return err
		}
		d, err := time.ParseDuration(args[0])
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: %q is not a positive duration", opt, args[0])
		}
		switch opt {
		case "idle_expiry":
			cfg.idleExpiry = d
		case "feed_poll":
			cfg.feedPoll = d
		default:
			if d < time.Hour {
				return fmt.Errorf("audit_retention: %s is less than an hour", d)
			}
			cfg.auditRetention = d
		}
	case "change_retention":
		if err := parseChangeRetention(args, &cfg.changes); err != nil {
			return err
		}
	case "address_ttl":
		if err := need(1, 1); err != nil {
			return err
		}
		n, err := strconv.ParseUint(args[0], 10, 32)
		if err != nil || n == 0 || n > 86400 {
			return fmt.Errorf("address_ttl: %q is not 1..86400 seconds", args[0])
		}
		cfg.addressTTL = uint32(n)
	case "record_write_per_minute", "acme_update_per_minute":
		if err := need(1, 1); err != nil {
			return err
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a positive count", opt, args[0])
		}
		if opt == "acme_update_per_minute" {
			cfg.acmeUpdates = n
		} else {
			cfg.recordWrites = n
		}
	case "plan_cap":
		if err := need(2, 2); err != nil {
			return err
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 {
			return fmt.Errorf("plan_cap %s: %q is not a count", args[0], args[1])
		}
		cfg.caps[args[0]] = n
	case "diagnose_budget":
		if err := need(1, 1); err != nil {
			return err
		}
		d, err := time.ParseDuration(args[0])
		// Below the API's 10 s bound on a request.
		if err != nil || d <= 0 || d > 8*time.Second {
			return fmt.Errorf("diagnose_budget: %q is not a duration up to 8s", args[0])
		}
		cfg.diagnoseBudget = d
	case "diagnose_per_minute":
		if err := need(1, 1); err != nil {
			return err
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("diagnose_per_minute: %q is not a positive count", args[0])
		}
		cfg.diagnoses = n
	case "cert_renew_at":
		if err := need(1, 1); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(args[0], 64)
		if err != nil || f <= 0 || f >= 1 {
			return fmt.Errorf("cert_renew_at: %q is not a fraction between 0 and 1", args[0])
		}
		cfg.certRenewAt = f
	case "acme_eab":
		if err := need(3, 3); err != nil {
			return err
		}
		ca, ok := cfg.acmeCAs[args[0]]
		if !ok {
			return fmt.Errorf("acme_eab %s: no acme_ca %s before it", args[0], args[0])
		}
		ca.eabKid, ca.eabHMAC = args[1], args[2]
		cfg.acmeCAs[args[0]] = ca
	case "trusted_proxy":
		// Repeatable, so a long list may be split over lines.
		if err := need(1, -1); err != nil {
			return err
		}
		for _, a := range args {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				return fmt.Errorf("trusted_proxy: %q is not a CIDR (such as 10.0.0.0/8 or 127.0.0.1/32)", a)
			}
			cfg.trustedProxies = append(cfg.trustedProxies, p.Masked())
		}
	case "acme_ca":
		if err := need(2, 3); err != nil {
			return err
		}
		if args[0] != "letsencrypt" && args[0] != "google" {
			return fmt.Errorf("acme_ca: name must be letsencrypt or google, got %q", args[0])
		}
		if err := httpURL(args[1]); err != nil {
			return fmt.Errorf("acme_ca %s: %w", args[0], err)
		}
		ca := acmeCA{directory: args[1]}
		if len(args) == 3 {
			ca.root = args[2]
		}
		cfg.acmeCAs[args[0]] = ca
	default:
		return c.Errf("unknown property %q", opt)
	}
	return nil
}

// parseChangeRetention reads DURATION [COUNT] into keep. A change feed kept
// for less than a minute would drop changes a node's next poll still asks
// for; fewer than 1 000 ids, those of a burst of writes.
func parseChangeRetention(args []string, keep *storage.ChangeRetention) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("change_retention: want DURATION [COUNT]")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < time.Minute {
		return fmt.Errorf("change_retention: %q is not a duration of at least 1m", args[0])
	}
	keep.Age = d
	if len(args) == 2 {
		n, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || n < 1000 {
			return fmt.Errorf("change_retention: %q is not a count of at least 1000", args[1])
		}
		keep.Count = n
	}
	return nil
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

// runtime is what an instance holds between OnStartup and OnShutdown.
type runtime struct {
	backend   *backend
	api       *apiServer
	stopWatch func() // the background work: audit purge, feed compaction; [P2] the watcher and certificates
}

// How often the [P2] watcher and the certificate manager look for work,
// entries past audit_retention are deleted, and the change feed compacted
// (often enough that a run deletes minutes of writes, never hours).
const (
	watchTick      = 100 * time.Millisecond
	certTick       = time.Second
	auditPurgeTick = time.Hour
	compactTick    = 10 * time.Minute
)

// cas are the configured ACME CAs, the first public CA first.
func (cfg *config) cas() []certs.CA {
	var out []certs.CA
	for _, name := range []string{"letsencrypt", "google"} {
		if ca, ok := cfg.acmeCAs[name]; ok {
			out = append(out, certs.CA{Name: name, Directory: ca.directory, Root: ca.root, EABKid: ca.eabKid, EABHMAC: ca.eabHMAC})
		}
	}
	return out
}

// diagnosed are the nameservers a diagnose report asks (those with an address).
func (h *Hostname) diagnosed() []diagnose.Nameserver {
	var out []diagnose.Nameserver
	for _, ns := range h.cfg.nameservers {
		if ns.addr != "" {
			out = append(out, diagnose.Nameserver{Name: strings.TrimSuffix(ns.name, "."), Addr: ns.addr})
		}
	}
	return out
}

// probed are the nameserver addresses a pending hostname must be observed
// on (nameservers given without an address cannot be asked).
func (h *Hostname) probed() []string {
	var out []string
	for _, ns := range h.cfg.nameservers {
		if ns.addr != "" {
			out = append(out, ns.addr)
		}
	}
	return out
}

// certKey reads the encryption key file, if configured.
func certKey(path string) (seal.Key, error) {
	if path == "" {
		return nil, nil
	}
	k, err := seal.LoadKey(path)
	if err != nil {
		return nil, fmt.Errorf("cert_encryption_key_file: %w", err)
	}
	return k, nil
}

// start opens (or shares) the store and the API listener.
func (h *Hostname) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := h.cfg
	policy, err := labels.Load(cfg.blockedLabels)
	if err != nil {
		return plugin.Error("hostname", fmt.Errorf("blocked_labels: %w", err))
	}
	token, err := adminToken(cfg.adminTokenFile)
	if err != nil {
		return plugin.Error("hostname", err)
	}
	key, err := certKey(cfg.certKeyFile)
	if err != nil {
		return plugin.Error("hostname", err)
	}
	b, err := acquireBackend(ctx, cfg.dialect, cfg.dsn, cfg.feedPoll, key)
	if err != nil {
		return plugin.Error("hostname", err)
	}
	doms := domains.New(b.store, key)
	if err := doms.Ensure(ctx, cfg.domains); err != nil {
		b.release()
		return plugin.Error("hostname", fmt.Errorf("creating the Corefile's domains: %w", err))
	}
	reserved, nsNames := map[string]bool{}, map[string]bool{}
	for _, ns := range cfg.nameservers {
		reserved[strings.SplitN(ns.name, ".", 2)[0]] = true
		nsNames[strings.TrimSuffix(ns.name, ".")] = true
	}
	logger := slog.Default().With("plugin", "hostname")
	mgr := certs.New(b.store, certs.Config{CAs: cfg.cas(), Email: cfg.acmeEmail, Key: key, Nameservers: h.probed(), RenewAt: cfg.certRenewAt,
		Observe: observeOrder}, logger)
	hs := hostnames.New(b.store, hostnames.Config{
		Profile: cfg.profile, IdleExpiry: cfg.idleExpiry, Caps: cfg.caps, Labels: policy, Reserved: reserved, Nameservers: nsNames,
		SealKey: key, Certs: mgr, Resolver: &targets.Resolver{Servers: cfg.resolvers}, RecordWrites: cfg.recordWrites,
		Diagnose:  diagnose.Config{Nameservers: h.diagnosed(), Resolvers: cfg.resolvers, CTLog: cfg.ctLog, Budget: cfg.diagnoseBudget},
		Diagnoses: cfg.diagnoses, ACMEUpdates: cfg.acmeUpdates,
	}, logger)
	accts := accounts.New(b.store, cfg.profile, b.auth)
	audits := audit.New(b.store, logger)
	audits.Failed, audits.Dropped = auditFailures.Inc, auditDropped.Inc
	srv := adminapi.New(adminapi.Config{
		Profile: cfg.profile, BaseURL: cfg.baseURL, AdminToken: token, TrustedProxies: cfg.trustedProxies,
		Health: func(ctx context.Context) error { return health(ctx, b) },
		Audit:  audits, Observe: observeAPI,
	}, hs, accts, b.auth, doms, logger)
	// The dashboard shares the listener and calls the same rules as the API.
	dash := dashboard.New(dashboard.Config{Profile: cfg.profile, BaseURL: cfg.baseURL, AdminToken: token,
		Audit: audits, Address: srv.ClientAddr}, accts, hs, doms, logger)
	api, err := acquireAPI(cfg.api, dashboard.Mount(srv, dash))
	if err != nil {
		b.release()
		return plugin.Error("hostname", err)
	}
	h.index = b.index
	h.rt = &runtime{backend: b, api: api}
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { audits.Keep(wctx, cfg.auditRetention, auditPurgeTick) })
	wg.Go(func() { compactChanges(wctx, b.store, cfg.changes, compactTick) })
	if cfg.profile == 2 {
		wg.Go(func() { hs.Watch(wctx, &nsprobe.Prober{Servers: h.probed(), Result: observeProbe}, watchTick) })
		if mgr.Configured() {
			wg.Go(func() { mgr.Run(wctx, certTick) })
		}
	}
	h.rt.stopWatch = func() { cancel(); wg.Wait() }
	for _, ns := range cfg.nameservers {
		if len(h.static[ns.name]) == 0 && h.configured(ns.name) {
			log.Warningf("nameserver %s is inside a served domain but has no address: give it one (nameserver NAME ADDR) or it is lame", ns.name)
		}
	}
	log.Infof("serving %d domain(s) from %s storage, API on %s (profile %d)", len(cfg.domains), cfg.dialect, cfg.api, cfg.profile)
	return nil
}

func health(ctx context.Context, b *backend) error {
	if !b.feed.Loaded() {
		return fmt.Errorf("the DNS index is not loaded yet")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := b.store.Ping(ctx); err != nil {
		return fmt.Errorf("the database does not answer")
	}
	return nil
}

// stop releases what start acquired.
func (h *Hostname) stop() error {
	if h.rt == nil {
		return nil
	}
	rt := h.rt
	h.rt = nil
	if rt.stopWatch != nil {
		rt.stopWatch()
	}
	errAPI := rt.api.release()
	errStore := rt.backend.release()
	if errAPI != nil {
		return errAPI
	}
	return errStore
}
