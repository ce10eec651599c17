package hostname

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/fastudp"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/rrl"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/hostmint/hostmint/storage"
)

var log = clog.NewWithPlugin("hostname")

func init() { plugin.Register("hostname", setup) }

// config is the parsed hostname block: the application's configuration
// and what only the DNS answers use.
type config struct {
	app        app.Config
	given      map[string]bool // the options the block sets
	addressTTL uint32
	// catalog is the RFC 9432 catalog zone served beside the domains
	// (lowercase FQDN), "" for none.
	catalog string
	// rrlRate answers a second per client network and response over UDP
	// (0: no limit), rrlNXDomains and rrlErrors those of their classes
	// (0: rrlRate), every rrlSlip-th refused one sent truncated.
	rrlRate, rrlNXDomains, rrlErrors, rrlSlip int
	// fastUDP: fast_udp, with fastSockets sockets (0: one per CPU).
	fastUDP     bool
	fastSockets int
}

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error("hostname", err)
	}
	h := newHandler(cfg)
	conf := dnsserver.GetConfig(c)
	gate := &keyGate{h: h, operator: map[string]bool{}}
	for name := range conf.TsigSecret { // the tsig block's, set up before this plugin
		gate.operator[strings.ToLower(name)] = true
	}
	if cfg.app.DynamicUpdate {
		if h.tsigSecrets, err = setupTSIG(c, cfg); err != nil {
			return plugin.Error("hostname", err)
		}
		h.reloader = reloaderOf(c)
		c.OnRestartFailed(func() error {
			if n := h.node.Load(); n != nil {
				h.watchKeys((*n).(updateNode))
			}
			return nil
		})
	}
	c.OnStartup(h.start)
	c.OnStartup(func() error { return h.startNotify(dnsserver.GetConfig(c)) })
	c.OnShutdown(h.stop)
	if h.fast != nil {
		c.OnStartup(func() error {
			if blocked := h.fast.Check(dnsserver.GetConfig(c)); blocked != "" {
				log.Warningf("fast_udp is off: the %s plugin comes before hostname and must see every query", blocked)
			}
			return nil
		})
		// A reload hands the address to the new instance's sockets: these
		// close first, and open again if the new instance fails to start.
		c.OnRestart(func() error { h.fast.Stop(); return nil })
		c.OnRestartFailed(func() error { h.fast.Reopen(); return nil })
		c.OnShutdown(func() error { h.fast.Stop(); return nil })
	}
	conf.AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	// The key gate goes first, before every plugin that acts on a signed
	// message (keygate.go).
	conf.Plugin = slices.Insert(conf.Plugin, 0, func(next plugin.Handler) plugin.Handler {
		gate.Next = next
		return gate
	})
	return nil
}

// pin tells ix the configured nameservers' names, which are in their
// zones' chains whatever they hold (their addresses are configured).
func (h *Handler) pin(ix *index.Index) {
	_, static := h.answers.Nameservers()
	ix.SetPinned(slices.Sorted(maps.Keys(static)))
}

func newHandler(cfg *config) *Handler {
	h := &Handler{cfg: cfg, index: index.New(nil, "")}
	var limiter *rrl.Limiter
	if cfg.rrlRate > 0 {
		limiter = rrl.New(cfg.rrlRate, cfg.rrlNXDomains, cfg.rrlErrors, cfg.rrlSlip)
	}
	h.answers = answer.New(answer.Config{SOA: cfg.app.SOA, Nameservers: cfg.app.NameserverSet(), ACMEDNS: cfg.app.ACMEDNSDomain,
		AddressTTL: cfg.addressTTL, Limiter: limiter}, h.index)
	h.xfr = xfr.New(xfr.Config{Catalog: cfg.catalog, SOA: cfg.app.SOA, AddressTTL: cfg.addressTTL}, h.index, h.answers)
	h.pin(h.index)
	if cfg.fastUDP {
		h.fast = fastudp.New(cfg.fastSockets, fastAnswers{h}, h, keyGateName)
	}
	return h
}

// parse reads the hostname block of c (one per server block).
func parse(c *caddy.Controller) (*config, error) {
	cfg := &config{app: app.Defaults(), given: map[string]bool{}, addressTTL: 60}
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
	if len(cfg.app.Nameservers) == 0 {
		return nil, fmt.Errorf("at least one nameserver is required (nameserver NAME [ADDR])")
	}
	if cfg.app.ReadOnly {
		readOnlyDefaults(cfg)
	}
	if slices.Contains(cfg.app.Domains, strings.TrimSuffix(cfg.catalog, ".")) {
		return nil, fmt.Errorf("catalog %s is a served domain: name the catalog zone apart (catalog.invalid is usual)", cfg.catalog)
	}
	if d := cfg.app.ACMEDNSDomain; d != "" && !slices.ContainsFunc(cfg.app.Domains, func(z string) bool { return d == z || strings.HasSuffix(d, "."+z) }) {
		return nil, fmt.Errorf("acme_dns_domain %s is none of the block's domains nor below one: name a domain it serves (add `domain %s`) or a name below one (auth.%s)",
			d, d, firstOr(cfg.app.Domains, "example.org"))
	}
	if cfg.app.BaseURL == "" && cfg.app.API != "" {
		cfg.app.BaseURL = "http://" + cfg.app.API
	}
	return cfg, nil
}

// readOnlyPoll is how often a read-only node polls by default: it hears
// no NOTIFY, and a poll of an idle database costs one indexed read.
const readOnlyPoll = 100 * time.Millisecond

// readOnlyDefaults fits cfg to a read-only node: no API unless the block
// names one, a faster poll unless it sets one.
func readOnlyDefaults(cfg *config) {
	if !cfg.given["api"] {
		cfg.app.API = ""
	}
	if !cfg.given["feed_poll"] {
		cfg.app.FeedPoll = readOnlyPoll
	}
}

// Node is what the handler answers from: the index a store's feed keeps
// current and whether the node is ready. The application gives it, as
// k8s_external is given its backend; a writer's adds the services.
type Node interface {
	Index() app.Index
	Ready() bool
	Stop() error
}

// updateNode is a node whose DNS servers take UPDATE (dynamic_update):
// its TSIG keys, and the door that applies (or, read-only, refuses) them.
type updateNode interface {
	TSIGSecrets() map[string]string
	CheckTSIG(name, algorithm string) error
	MayTransferTSIG(ctx context.Context, name, algorithm, zone string) (bool, error)
	OnTSIGChange(f func())
	ServeTSIG(secrets map[string]string)
	ReloadTSIG(reload func() error)
}

// startNode starts the node of cfg: a writer, or a read-only node.
func startNode(cfg app.Config, newIndex app.NewIndex) (Node, Updater, error) {
	if cfg.ReadOnly {
		n, err := app.StartReadOnly(cfg, newIndex)
		if err != nil {
			return nil, nil, err
		}
		return n, n.UpdateDoor(), nil
	}
	a, err := app.Start(cfg, newIndex)
	if err != nil {
		return nil, nil, err
	}
	return a, a.UpdateDoor(), nil
}

// start starts the node (or joins the one already running on the same
// store and listener) and answers from its store's index.
func (h *Handler) start() error {
	n, updater, err := startNode(h.cfg.app, func(signers func(*storage.Domain) (*domains.Signer, error)) app.Index {
		ix := index.New(signers, h.cfg.app.ACMEDNSDomain)
		h.pin(ix)
		return ix
	})
	if err != nil {
		return plugin.Error("hostname", err)
	}
	h.index = n.Index().(*index.Index)
	h.answers.SetIndex(h.index)
	h.xfr.SetIndex(h.index)
	h.node.Store(&n)
	if h.cfg.app.DynamicUpdate {
		h.startTSIG(n.(updateNode), updater)
	}
	_, static := h.answers.Nameservers()
	for _, ns := range h.cfg.app.Nameservers {
		if len(static[ns.Name]) == 0 && h.configured(ns.Name) {
			log.Warningf("nameserver %s is inside a served domain but has no address: give it one (nameserver NAME ADDR) or it is lame", ns.Name)
		}
	}
	return nil
}

// stop releases what start acquired.
func (h *Handler) stop() error {
	if h.stopNotify != nil {
		h.stopNotify()
		h.stopNotify = nil
	}
	n := h.node.Swap(nil)
	if n == nil {
		return nil
	}
	return (*n).Stop()
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}
