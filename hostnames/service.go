// Package hostnames holds the lifecycle rules of a hostname: what create,
// read, update, renew and release may do in each profile, the plan gates,
// caps and label rules, and the state a hostname is in at a given moment.
//
// It decides and returns problem errors with the spec's status and code; it
// knows nothing of HTTP requests or DNS messages, and reaches the database
// only through storage.
package hostnames

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/problem"
	"github.com/hostmint/hostmint/storage"
)

// Plans of profile 1.
const (
	PlanFree     = "free"
	PlanPro      = "pro"
	PlanBusiness = "business"
)

// DefaultCaps are profile 1's active-hostname caps; free is the spec's 25,
// the others are this service's defaults (Corefile plan_cap changes them).
var DefaultCaps = map[string]int{PlanFree: 25, PlanPro: 100, PlanBusiness: 1000}

// Config is what the rules depend on.
type Config struct {
	Profile    int
	IdleExpiry time.Duration  // [P1]
	Caps       map[string]int // plan -> active-hostname cap
	Labels     *labels.Policy
	// Reserved labels besides the policy (the nameservers' own names).
	Reserved map[string]bool
}

// Propagation waits until this node serves a committed change.
type Propagation interface {
	WaitApplied(ctx context.Context, id int64) error
}

// Service applies the rules to the store.
type Service struct {
	store *storage.Store
	cfg   Config
	prop  Propagation
	log   *slog.Logger
	now   func() time.Time
}

// New makes a Service. prop may be nil (then writes do not wait for DNS).
func New(store *storage.Store, cfg Config, prop Propagation, log *slog.Logger) *Service {
	if cfg.Caps == nil {
		cfg.Caps = DefaultCaps
	}
	if cfg.Labels == nil {
		cfg.Labels = labels.Default()
	}
	return &Service{store: store, cfg: cfg, prop: prop, log: log, now: time.Now}
}

// Profile is the behaviour profile in force.
func (s *Service) Profile() int { return s.cfg.Profile }

// Cap is the active-hostname cap of an account.
func (s *Service) Cap(a *storage.Account) int {
	if a.Cap != nil {
		return *a.Cap
	}
	return s.cfg.Caps[a.Plan]
}

// Status is the state h is in at now: a stored "live" whose idle time has
// run out reads "expired" ([P1]).
func (s *Service) Status(h *storage.Hostname, now time.Time) string {
	if h.Status == storage.StatusLive && h.ExpiresAt != 0 && now.UnixMilli() >= h.ExpiresAt {
		return StatusExpired
	}
	return h.Status
}

// StatusExpired is the derived profile-1 state.
const StatusExpired = "expired"

// write runs fn in one transaction and then waits (briefly) until this node
// serves the change, so a client that resolves right after the answer sees it.
func (s *Service) write(ctx context.Context, fn func(ctx context.Context, tx *storage.Tx) error) error {
	id, err := s.store.Write(ctx, fn)
	if err != nil {
		return err
	}
	if id > 0 && s.prop != nil {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := s.prop.WaitApplied(wctx, id); err != nil {
			s.log.Warn("change not applied on this node in time", "change", id, "err", err)
		}
	}
	return nil
}

// CreateInput is a create request, fields as sent.
type CreateInput struct {
	IP    *string
	Label *string
}

// Create registers an address and mints a hostname.
func (s *Service) Create(ctx context.Context, accountID string, in CreateInput) (*storage.Hostname, error) {
	addr, err := parseIP(in.IP)
	if err != nil {
		return nil, err
	}
	var label string
	if in.Label != nil {
		label = strings.ToLower(*in.Label)
		if err := s.checkLabel(label); err != nil {
			return nil, err
		}
	}
	var h *storage.Hostname
	err = s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		acct, err := tx.LockAccount(ctx, accountID)
		if err != nil {
			return err
		}
		if err := s.checkAddressPlan(acct, addr.class); err != nil {
			return err
		}
		if in.Label != nil && acct.Plan != PlanPro && acct.Plan != PlanBusiness {
			return problem.Forbidden("custom labels need the Pro or Business plan (this account is on %s)", acct.Plan)
		}
		now := s.now()
		if err := s.checkCap(ctx, tx, acct, now); err != nil {
			return err
		}
		dom, err := s.poolDomain(ctx, tx)
		if err != nil {
			return err
		}
		if in.Label != nil {
			if err := s.labelFree(ctx, tx, dom, label); err != nil {
				return err
			}
		} else if label, err = s.opaqueLabel(ctx, tx, dom); err != nil {
			return err
		}
		ms := now.UnixMilli()
		h = &storage.Hostname{
			ID: "h_" + apikey.Random(10), AccountID: acct.ID, DomainID: dom.ID,
			Label: label, Name: label + "." + dom.Name, IP: addr.text,
			Status: storage.StatusLive, CreatedAt: ms, UpdatedAt: ms,
			ExpiresAt: s.expiry(now),
		}
		if err := tx.InsertHostname(ctx, h); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return problem.Conflict("label %q is taken on %s", label, dom.Name)
			}
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return h, err
}

// expiry is the expires_at of a hostname used at now (0: never, [P2]).
func (s *Service) expiry(now time.Time) int64 {
	if s.cfg.Profile != 1 {
		return 0
	}
	return now.Add(s.cfg.IdleExpiry).UnixMilli()
}

func (s *Service) checkLabel(label string) error {
	if err := labels.Syntax(label); err != nil {
		return problem.BadRequest("label %s", err)
	}
	if s.cfg.Labels.Blocked(label) || s.cfg.Reserved[label] {
		return problem.BadRequest("label %q is reserved or blocked; choose another", label)
	}
	return nil
}

func (s *Service) checkAddressPlan(acct *storage.Account, class addrclass.Class) error {
	if s.cfg.Profile == 1 && class == addrclass.Private && acct.Plan != PlanBusiness {
		return problem.Forbidden("private and reserved addresses need the Business plan (this account is on %s)", acct.Plan)
	}
	return nil
}

func (s *Service) checkCap(ctx context.Context, tx *storage.Tx, acct *storage.Account, now time.Time) error {
	n, err := tx.CountActive(ctx, acct.ID, now.UnixMilli())
	if err != nil {
		return err
	}
	if c := s.Cap(acct); n >= c {
		return problem.RateLimited("active-hostname cap reached: %d of %d; release one first", n, c)
	}
	return nil
}

// poolDomain is the domain profile-1 names are minted on: the oldest active
// domain that belongs to no account.
func (s *Service) poolDomain(ctx context.Context, tx *storage.Tx) (*storage.Domain, error) {
	ds, err := tx.Domains(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		if ds[i].AccountID == "" && ds[i].Status == storage.DomainActive {
			return &ds[i], nil
		}
	}
	return nil, problem.New(409, problem.CodeNoDomainAvailable, "no domain is available for new hostnames; ask the operator to add one")
}

// labelFree checks that label can be taken on dom: no live holder, and
// ([P1]) never released by anyone.
func (s *Service) labelFree(ctx context.Context, tx *storage.Tx, dom *storage.Domain, label string) error {
	if _, err := tx.LabelHolder(ctx, dom.ID, label); err == nil {
		return problem.Conflict("label %q is taken on %s", label, dom.Name)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if _, err := tx.Retired(ctx, dom.ID, label); err == nil {
		return problem.Conflict("label %q was released on %s and is retired for good", label, dom.Name)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

func (s *Service) opaqueLabel(ctx context.Context, tx *storage.Tx, dom *storage.Domain) (string, error) {
	for range 8 {
		l := labels.Opaque()
		if s.cfg.Labels.Blocked(l) || s.cfg.Reserved[l] {
			continue
		}
		err := s.labelFree(ctx, tx, dom, l)
		if err == nil {
			return l, nil
		}
		if _, ok := problem.As(err); !ok {
			return "", err
		}
	}
	return "", errors.New("hostnames: no free opaque label after 8 tries")
}

type parsedIP struct {
	text  string
	class addrclass.Class
}

func parseIP(ip *string) (parsedIP, error) {
	if ip == nil || *ip == "" {
		return parsedIP{}, problem.BadRequest("ip is required")
	}
	a, err := addrclass.Parse(*ip)
	if err != nil {
		return parsedIP{}, problem.BadRequest("ip %q is not an IPv4 or IPv6 address", *ip)
	}
	return parsedIP{text: a.String(), class: addrclass.Of(a)}, nil
}
