// Package hostnames holds the lifecycle rules of a hostname: what create,
// read, update, renew, release and the abuse actions may do in each
// profile, the plan gates, caps, rate limits, address classes, domains and
// label rules, and the state a hostname is in at a given moment.
//
// It decides and returns apierror errors with the spec's codes; it
// knows nothing of HTTP requests or DNS messages, and reaches the database
// only through storage.
package hostnames

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/profile"

	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/seal"

	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/targets"
)

// Config is what the lifecycle of hostnames depends on: minting, reading,
// repointing, renewing and releasing them.
type Config struct {
	Profile    profile.Profile
	IdleExpiry time.Duration  // [P1]
	Caps       map[string]int // plan -> active-hostname cap
	Labels     *labels.Policy
	// Reserved labels besides the policy ([P1]: the first labels of the
	// nameservers' names).
	Reserved map[string]bool
	// Nameservers are the nameservers' names (lowercase, no trailing dot),
	// which no hostname may take.
	Nameservers map[string]bool
	// ACMEDNS is the name acme-dns registrations are made under
	// (lowercase, no trailing dot): no hostname may take it or a name
	// above it.
	ACMEDNS string
	// SealKey is the certificate encryption key ([P2] certificate: managed
	// needs one); nil when none is configured.
	SealKey seal.Key
	// Certs runs csr and managed certificates; nil or without CAs: those
	// modes answer 501.
	Certs *certs.Manager
	// Resolver resolves [P2] targets; nil: targets are not available.
	Resolver *targets.Resolver
}

// core is what every part of the hostname rules shares: the store, the
// profile, the clock, and the rules of ownership and state (owned,
// change, touch, Status).
type core struct {
	store      *storage.Store
	profile    profile.Profile
	idleExpiry time.Duration
	log        *slog.Logger
	now        func() time.Time
}

// Service is the lifecycle of hostnames. Records, certificates and
// DNS-01, the background watcher, abuse actions and diagnose are parts
// of their own (NewRecords, NewCertificates, NewWatcher, NewAbuse,
// NewDiagnoser) on the same core.
type Service struct {
	*core
	cfg Config
}

// New makes a Service.
func New(store *storage.Store, cfg Config, log *slog.Logger) *Service {
	if cfg.Caps == nil {
		cfg.Caps = plans.DefaultCaps()
	}
	if cfg.Labels == nil {
		cfg.Labels = labels.Default()
	}
	c := &core{store: store, profile: cfg.Profile, idleExpiry: cfg.IdleExpiry, log: log, now: time.Now}
	return &Service{core: c, cfg: cfg}
}

// Cap is the active-hostname cap of an account.
func (s *Service) Cap(a *storage.Account) int {
	return plans.Cap(a, s.cfg.Caps)
}

// StatusExpired is the derived profile-1 state.
const StatusExpired = "expired"

// Status is the state h is in at now: a stored "live" whose idle time has
// run out reads "expired" ([P1]).
func (s *core) Status(h *storage.Hostname, now time.Time) string {
	if h.Expired(now.UnixMilli()) {
		return StatusExpired
	}
	return h.Status
}

// Served reports whether DNS serves h now: live or pending, and [P1] not
// expired.
func (s *core) Served(h *storage.Hostname) bool {
	st := s.Status(h, s.now())
	return st == storage.StatusLive || st == storage.StatusPending
}

// write runs fn in one transaction, through the store's write pipeline
// (storage.WriteGrouped), where concurrent writes share a commit: key names
// the writes that take turns (an account's, a registration's), which keep
// their order. A client that resolves right after the answer sees the
// change.
func (s *core) write(ctx context.Context, key string, fn func(ctx context.Context, tx *storage.Tx) error) error {
	return s.store.WriteGroupedVisible(ctx, key, fn)
}

// expiry is the expires_at of a hostname used at now (0: never, [P2]).
func (s *core) expiry(now time.Time) int64 {
	if !s.profile.IdleExpiry() {
		return 0
	}
	return now.Add(s.idleExpiry).UnixMilli()
}

// checkLabel applies the label rules to a custom label or subdomain: the
// spec's syntax, and [P1] (pool domains, shared by everyone) no reserved,
// blocked or impersonating term. [P2] a subdomain is on the team's own
// domain, where the syntax alone applies (a nameserver's own name there is
// taken: see labelFree).
func (s *Service) checkLabel(field, label string) error {
	if err := labels.Syntax(label); err != nil {
		return apierror.BadRequest("%s %s", field, err)
	}
	if s.profile.Teams() {
		return nil
	}
	if labels.Punycode(label) {
		return apierror.BadRequest("%s %q is the ASCII form of an internationalised name, which can pass for another name; choose another", field, label)
	}
	if s.cfg.Labels.Blocked(label) || s.cfg.Reserved[label] {
		return apierror.BadRequest("%s %q is reserved or blocked; choose another", field, label)
	}
	return nil
}

type parsedIP struct {
	addr  netip.Addr
	text  string
	class addrclass.Class
}

func parseIP(ip *string) (parsedIP, error) {
	if ip == nil || *ip == "" {
		return parsedIP{}, apierror.BadRequest("ip is required")
	}
	a, err := addrclass.Parse(*ip)
	if err != nil {
		return parsedIP{}, apierror.BadRequest("ip %q is not an IPv4 or IPv6 address", *ip)
	}
	return parsedIP{addr: a, text: a.String(), class: addrclass.Of(a)}, nil
}

// joinAddrs is the stored form of the addresses DNS serves.
func joinAddrs(as []netip.Addr) string {
	ss := make([]string, len(as))
	for i, a := range as {
		ss[i] = a.String()
	}
	return strings.Join(ss, ",")
}

// ClassOf is the address class a hostname was minted with.
func ClassOf(h *storage.Hostname) addrclass.Class {
	if h.Class != "" {
		return addrclass.Class(h.Class)
	}
	a, _ := addrclass.Parse(h.IP)
	return addrclass.Of(a)
}
