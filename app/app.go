package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/dashboard"
	"github.com/hostmint/hostmint/diagnose"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/idempotency"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/nsprobe"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/targets"
)

// The log lines keep the plugin's prefix: an operator reads one service.
var log = clog.NewWithPlugin("hostname")

// Index is the DNS side's copy of one store's zones, which the store's
// feed keeps current. NewIndex makes it when the store is opened, and it
// is shared like the store; signers opens a signed domain's key.
type Index interface {
	storage.Consumer
	Len() int64
	// Unservable are the signed domains whose key cannot be opened with
	// this node's cert_encryption_key_file: they answer SERVFAIL, and the
	// node is not ready while there are any.
	Unservable() []string
}

// NewIndex makes the Index of a store being opened.
type NewIndex func(signers func(*storage.Domain) (*domains.Signer, error)) Index

// How often the [P2] watcher and the certificate manager look for work,
// entries past AuditRetention are deleted, and the change feed compacted
// (often enough that a run deletes minutes of writes, never hours).
const (
	watchTick      = 100 * time.Millisecond
	certTick       = time.Second
	auditPurgeTick = time.Hour
	// idempotencyPurgeTick: Idempotency-Key answers are kept a day and
	// deleted within the hour after.
	idempotencyPurgeTick = time.Hour
	// rateEventRetention: every sliding window is an hour at most, so an
	// older event counts for nothing (a caller that never came back).
	rateEventRetention = 2 * time.Hour
	// revokedKeyRetention is how long a revoked API or TSIG key's row is
	// kept before it is purged (the audit log keeps its id for good).
	revokedKeyRetention = 7 * 24 * time.Hour
	// releasedRetention is how long a released hostname's row is kept
	// (its retired label, for good) before it is purged.
	releasedRetention = 30 * 24 * time.Hour
	// closedTeamsTick is how soon after a plan's end its team's sessions
	// and links are deleted (they stop working at that moment regardless).
	closedTeamsTick = time.Minute
	// expiryTick is how often passed idle expiries are recorded for
	// secondaries ([P1]).
	expiryTick  = time.Second
	compactTick = 10 * time.Minute
	// clockTick is how often a node looks whether the feed's clock needs
	// a change to move it (storage.TickClock): a few minutes into an hour.
	clockTick = 5 * time.Minute
	// seenMACTick: a signed UPDATE's MAC is kept about 11 minutes at most
	// (dnsupdate/replay.go), so the table holds that plus a minute of them.
	seenMACTick = time.Minute
	// beatTick is how often a writer stamps the heartbeat read-only nodes
	// measure their lag against: their lag's resolution.
	beatTick = time.Second
)

// App is a writer node: its Node, the services, the API and the
// background work that Start acquired, until Stop.
type App struct {
	*Node
	updater *dnsupdate.Updater
	stop    func() // the background work: audit purge, feed compaction; [P2] the watcher and certificates
}

// Start opens (or shares) the store and the API listener of cfg, builds
// the services and starts the background work. cfg.ReadOnly is for
// StartReadOnly.
func Start(cfg Config, newIndex NewIndex) (*App, error) {
	if cfg.ReadOnly {
		return nil, fmt.Errorf("a read-only node starts with StartReadOnly")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + cfg.API
	}
	prof, err := profile.Parse(strconv.Itoa(cfg.Profile))
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	policy, err := labels.Load(cfg.BlockedLabels)
	if err != nil {
		return nil, fmt.Errorf("blocked_labels: %w", err)
	}
	token, err := adminToken(cfg.AdminTokenFile)
	if err != nil {
		return nil, err
	}
	node, err := openNode(ctx, &cfg, newIndex)
	if err != nil {
		return nil, err
	}
	n, key := node.node, node.key
	doms := domains.New(n.store, key)
	if err := doms.Ensure(ctx, cfg.Domains); err != nil {
		n.release()
		return nil, fmt.Errorf("creating the Corefile's domains: %w", err)
	}
	reserved, nsNames := map[string]bool{}, map[string]bool{}
	for _, ns := range cfg.Nameservers {
		reserved[strings.SplitN(ns.Name, ".", 2)[0]] = true
		nsNames[strings.TrimSuffix(ns.Name, ".")] = true
	}
	logger := slog.Default().With("plugin", "hostname")
	mgr := certs.New(n.store, certs.Config{CAs: cfg.cas(), Email: cfg.ACMEEmail, Key: key, Nameservers: cfg.probed(),
		RenewAt: cfg.CertRenewAt, Observe: observeOrder}, logger)
	resolver := &targets.Resolver{Servers: cfg.Resolvers, Names: &targets.Names{Allow: cfg.TargetAllow, Deny: cfg.TargetDeny}}
	if len(cfg.TargetResolvers) > 0 {
		resolver.Servers = cfg.TargetResolvers
	}
	hs := hostnames.New(n.store, hostnames.Config{
		Profile: prof, IdleExpiry: cfg.IdleExpiry, Caps: cfg.Caps, Labels: policy, Reserved: reserved, Nameservers: nsNames,
		SealKey: key, Certs: mgr, Resolver: resolver, ACMEDNS: cfg.ACMEDNSDomain,
	}, logger)
	rules := hostnames.Rules{
		Lifecycle:    hs,
		Records:      hostnames.NewRecords(hs, cfg.RecordWrites),
		Certificates: hostnames.NewCertificates(hs, key, cfg.ACMEUpdates).WithACMEDNS(cfg.ACMEDNSDomain),
		Abuse:        hostnames.NewAbuse(hs),
		Diagnoser: hostnames.NewDiagnoser(hs, diagnose.Config{Nameservers: cfg.diagnosed(), Resolvers: cfg.diagnoseResolvers(),
			CTLog: cfg.CTLog, Budget: cfg.DiagnoseBudget}, cfg.Diagnoses),
	}
	accts := accounts.New(n.store, prof, n.auth).WithTSIG(key, n.keyring)
	audits := audit.New(n.store, logger)
	audits.Failed, audits.Dropped = auditFailures.Inc, auditDropped.Inc
	updater := dnsupdate.New(n.store, n.keyring, rules, prof).WithApex(cfg.NameserverSet(), cfg.SOA)
	updater.Audit = auditor{audits}
	var tsigServed func(context.Context, string)
	if cfg.DynamicUpdate {
		tsigServed = n.awaitTSIG
	}
	idem := idempotency.New(n.store, key)
	srv := adminapi.New(adminapi.Config{
		Profile: prof, BaseURL: cfg.BaseURL, AdminToken: token, TrustedProxies: cfg.TrustedProxies, Idempotency: idem,
		Health: node.health, Audit: audits, Observe: observeAPI, Guesses: n.guesses, TSIGServed: tsigServed,
	}, rules, accts, n.auth, doms, logger)
	// The dashboard shares the listener and calls the same rules as the API.
	dash := dashboard.New(dashboard.Config{Profile: prof, BaseURL: cfg.BaseURL, AdminToken: token,
		Audit: audits, Address: srv.ClientAddr, TLS: srv.OverTLS, Guesses: n.guesses,
		DNSAddr: cfg.updateAddr(), TSIGServed: tsigServed}, accts, rules, doms, logger)
	if node.api, err = acquireListener(cfg.API, dashboard.Mount(srv, dash), apiLimits(cfg.TrustedProxies)); err != nil {
		n.release()
		return nil, err
	}
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { audits.Keep(wctx, cfg.AuditRetention, auditPurgeTick) })
	wg.Go(func() { compactChanges(wctx, n.store, cfg.Changes, compactTick) })
	wg.Go(func() {
		every(wctx, clockTick, "moving the feed's clock (signed zones' renewals)", func() error {
			_, err := n.store.TickClock(wctx, time.Now())
			return err
		})
	})
	wg.Go(func() {
		every(wctx, idempotencyPurgeTick, "deleting Idempotency-Key answers older than a day", func() error {
			_, err := idem.Purge(wctx)
			return err
		})
	})
	wg.Go(func() {
		every(wctx, idempotencyPurgeTick, "deleting hostnames released more than 30 days ago", func() error {
			_, err := n.store.PurgeReleased(wctx, time.Now().Add(-releasedRetention).UnixMilli())
			return err
		})
	})
	wg.Go(func() {
		every(wctx, idempotencyPurgeTick, "deleting keys revoked more than a week ago", func() error {
			_, err := n.store.PurgeRevokedKeys(wctx, time.Now().Add(-revokedKeyRetention).UnixMilli())
			return err
		})
	})
	wg.Go(func() {
		every(wctx, idempotencyPurgeTick, "deleting acme-dns registrations unused for 180 days, and spent rate events", func() error {
			if _, err := n.store.PurgeUnusedRegistrations(wctx, time.Now().Add(-hostnames.RegistrationRetention).UnixMilli()); err != nil {
				return err
			}
			_, err := n.store.PurgeRateEvents(wctx, time.Now().Add(-rateEventRetention).UnixMilli())
			return err
		})
	})
	wg.Go(func() {
		every(wctx, seenMACTick, "deleting the MACs of signed UPDATE messages past their time", func() error {
			_, err := n.store.PurgeSeenMACs(wctx, time.Now().UnixMilli())
			return err
		})
	})
	wg.Go(func() { accts.EndClosedTeams(wctx, closedTeamsTick, log.Infof, log.Warningf) })
	if cfg.Dialect == storage.Postgres {
		wg.Go(func() { beat(wctx, n.store, beatTick) })
	}
	if prof.IdleExpiry() {
		wg.Go(func() { recordExpiries(wctx, n.store, expiryTick) })
	}
	if prof.Teams() {
		watcher := hostnames.NewWatcher(hs, resolver)
		wg.Go(func() { watcher.Watch(wctx, &nsprobe.Prober{Servers: cfg.probed(), Result: observeProbe}, watchTick) })
		if mgr.Configured() {
			wg.Go(func() { mgr.Run(wctx, certTick) })
		}
	}
	log.Infof("serving %d domain(s) from %s storage, API on %s (profile %d)", len(cfg.Domains), cfg.Dialect, cfg.API, cfg.Profile)
	return &App{Node: node, updater: updater, stop: func() { stop(); wg.Wait() }}, nil
}

// Stop ends the background work and releases what Start acquired.
func (a *App) Stop() error {
	a.stop()
	return a.Node.Stop()
}

// cas are the configured ACME CAs, the first public CA first.
func (cfg *Config) cas() []certs.CA {
	var out []certs.CA
	for _, name := range certs.CANames {
		if ca, ok := cfg.ACMECAs[name]; ok {
			out = append(out, certs.CA{Name: name, Directory: ca.Directory, Root: ca.Root, EABKid: ca.EABKid, EABHMAC: ca.EABHMAC})
		}
	}
	return out
}

// updateAddr is where the dashboard's snippets send UPDATE: the first
// nameserver with an address.
func (cfg *Config) updateAddr() string {
	for _, ns := range cfg.Nameservers {
		if ns.Addr != "" {
			return ns.Addr
		}
	}
	return ""
}

// diagnosed are the nameservers a diagnose report asks (those with an address).
func (cfg *Config) diagnosed() []diagnose.Nameserver {
	var out []diagnose.Nameserver
	for _, ns := range cfg.Nameservers {
		if ns.Addr != "" {
			out = append(out, diagnose.Nameserver{Name: strings.TrimSuffix(ns.Name, "."), Addr: ns.Addr})
		}
	}
	return out
}

// diagnoseResolvers are the resolvers diagnose asks, named for reports by
// the operator's labels, never by their addresses.
func (cfg *Config) diagnoseResolvers() []diagnose.Resolver {
	out := make([]diagnose.Resolver, len(cfg.Resolvers))
	for i, addr := range cfg.Resolvers {
		label := cfg.ResolverLabels[addr]
		if label == "" {
			label = fmt.Sprintf("resolver %d", i+1)
		}
		out[i] = diagnose.Resolver{Label: label, Addr: addr}
	}
	return out
}

// probed are the nameserver addresses a pending hostname must be observed
// on (nameservers given without an address cannot be asked).
func (cfg *Config) probed() []string {
	var out []string
	for _, ns := range cfg.Nameservers {
		if ns.Addr != "" {
			out = append(out, ns.Addr)
		}
	}
	return out
}
