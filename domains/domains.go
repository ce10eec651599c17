// Package domains holds the rules for the zones this service is
// authoritative for: their names, status and (profile 2) the team they are
// dedicated to. The operator manages them through the admin API and the
// Corefile's domain lines. It returns apierror errors and knows nothing of HTTP.
package domains

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Service holds the domain rules.
type Service struct {
	store *storage.Store
	key   seal.Key // seals DNSSEC private keys; nil: DNSSEC cannot be enabled
	now   func() time.Time
}

// New makes a Service.
func New(store *storage.Store, key seal.Key) *Service {
	return &Service{store: store, key: key, now: time.Now}
}

// Input is a domain create or patch; nil fields are not sent.
type Input struct {
	Name        *string
	AccountID   *string
	Status      *string
	CAA         *[]string
	DNSSEC      *bool
	DSPublished *bool
	NSEC3       *bool
	Rollover    *string // a key rollover's next step: start, activate, finish, cancel
}

// Normalize lowercases a domain name and drops a trailing dot; it returns ""
// for text that cannot be a zone served here.
func Normalize(name string) string {
	n := strings.TrimSuffix(labels.Lower(strings.TrimSpace(name)), ".")
	// A second trailing dot would be kept and make "example.org." a name
	// apart from "example.org" (a duplicate zone past the conflict check).
	if n == "" || len(n) > 200 || strings.HasSuffix(n, ".") || dns.CountLabel(n) < 2 {
		return ""
	}
	if _, ok := dns.IsDomainName(n); !ok {
		return ""
	}
	for _, l := range dns.SplitDomainName(n) {
		if labels.LDH(l) != nil {
			return ""
		}
	}
	return n
}

// Create adds a domain.
func (s *Service) Create(ctx context.Context, in Input) (*storage.Domain, error) {
	if in.Name == nil {
		return nil, apierror.BadRequest("name is required")
	}
	name := Normalize(*in.Name)
	if name == "" {
		return nil, apierror.BadRequest("name %q is not a domain name (two or more labels of a-z 0-9 -)", *in.Name)
	}
	d := &storage.Domain{ID: "dom_" + apikey.Random(10), Name: name, Status: storage.DomainActive, CreatedAt: s.now().UnixMilli(), CatalogVersion: 1}
	err := s.store.WriteVisible(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := s.apply(ctx, tx, d, in); err != nil {
			return err
		}
		if err := tx.InsertDomain(ctx, d); errors.Is(err, storage.ErrConflict) {
			return apierror.Conflict("domain %s already exists", name)
		} else if err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindDomain, d.ID)
	})
	return d, err
}

func (s *Service) apply(ctx context.Context, tx *storage.Tx, d *storage.Domain, in Input) error {
	if in.CAA != nil {
		caa, err := ParseCAA(*in.CAA)
		if err != nil {
			return err
		}
		d.CAA = caa
	}
	if err := s.applyDNSSEC(d, in); err != nil {
		return err
	}
	if err := s.applyRollover(d, in); err != nil {
		return err
	}
	if in.Status != nil {
		switch *in.Status {
		case storage.DomainActive, storage.DomainProvisioning:
			d.Status = *in.Status
		default:
			return apierror.BadRequest("status must be active or provisioning, got %q", *in.Status)
		}
	}
	if in.AccountID != nil {
		if *in.AccountID != "" {
			if a, err := tx.Account(ctx, *in.AccountID); errors.Is(err, storage.ErrNotFound) {
				return apierror.BadRequest("account_id %q is not an account", *in.AccountID)
			} else if err != nil {
				return err
			} else if err := accounts.RefuseClosed(a); err != nil {
				return err
			}
		}
		d.AccountID = *in.AccountID
	}
	return nil
}

// List returns every domain.
func (s *Service) List(ctx context.Context) ([]storage.Domain, error) {
	return s.store.Reader().Domains(ctx)
}

// Patch changes the fields sent.
func (s *Service) Patch(ctx context.Context, id string, in Input) (*storage.Domain, error) {
	if in.Name != nil {
		return nil, apierror.BadRequest("a domain's name cannot be changed")
	}
	var d *storage.Domain
	err := s.store.WriteVisible(ctx, func(ctx context.Context, tx *storage.Tx) error {
		var err error
		if d, err = tx.Domain(ctx, id); errors.Is(err, storage.ErrNotFound) {
			return apierror.NotFound("Domain not found")
		} else if err != nil {
			return err
		}
		if err := s.apply(ctx, tx, d, in); err != nil {
			return err
		}
		if err := tx.UpdateDomain(ctx, d); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindDomain, d.ID)
	})
	return d, err
}

// Ensure creates the Corefile's domains that the store does not hold yet
// (as active pool domains); several nodes may do this at once.
func (s *Service) Ensure(ctx context.Context, names []string) error {
	err := s.store.WriteVisible(ctx, func(ctx context.Context, tx *storage.Tx) error {
		now := s.now().UnixMilli()
		for i, n := range names {
			// Spaced by a millisecond so the first line stays the first pool domain.
			d := &storage.Domain{ID: "dom_" + apikey.Random(10), Name: n, Status: storage.DomainActive, CreatedAt: now + int64(i), CatalogVersion: 1}
			ins, err := tx.InsertDomainIfMissing(ctx, d)
			if err != nil {
				return err
			}
			if ins {
				if err := tx.Changed(ctx, storage.KindDomain, d.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return err
}
