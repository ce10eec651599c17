// Package accounts holds the rules for accounts (profile-2 teams) and their
// credentials: API keys (what the operator may create and change, the key
// limit, scopes, and the authentication of bearer keys with a cache of
// verified keys), and the dashboard's one-time sign-in links and sessions.
//
// It returns apierror errors; it knows nothing of HTTP requests.
package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// Service holds the account and key rules.
type Service struct {
	store   *storage.Store
	profile profile.Profile
	auth    *Authenticator
	seal    seal.Key // seals TSIG secrets; none: TSIG keys answer 501
	ring    *Keyring // hears of revoked TSIG keys and closed teams at once on this node
	now     func() time.Time
}

// WithTSIG lets s issue TSIG keys sealed with k; ring (may be nil) hears of
// each revocation and each team's change of access on this node at once
// (the feed tells the others).
func (s *Service) WithTSIG(k seal.Key, ring *Keyring) *Service {
	s.seal, s.ring = k, ring
	return s
}

// New makes a Service; auth (may be nil) is told of revocations at once.
func New(store *storage.Store, p profile.Profile, auth *Authenticator) *Service {
	return &Service{store: store, profile: p, auth: auth, now: time.Now}
}

// MaxKeys is the number of keys an account may hold ([P1] limit; kept in
// both profiles).
const MaxKeys = 20

// Input is an account create or patch; nil fields are not sent.
type Input struct {
	Name    *string
	Plan    *string
	Cap     *int
	Billing *bool
	// Status is "active" or "suspended"; suspending ends the team's
	// access (see access.go).
	Status *string
	// PlanEnd, when set, is when the plan ends; a zero time: never.
	PlanEnd *time.Time
}

func (s *Service) apply(a *storage.Account, in Input) error {
	if in.Name != nil {
		if n := len(*in.Name); n == 0 || n > 200 {
			return apierror.BadRequest("name must be 1 to 200 characters")
		}
		a.Name = *in.Name
	}
	if in.Plan != nil {
		if err := plans.Check(s.profile, *in.Plan); err != nil {
			return err
		}
		a.Plan = *in.Plan
	}
	if in.Cap != nil {
		if *in.Cap < 0 {
			return apierror.BadRequest("cap must not be negative")
		}
		c := *in.Cap
		a.Cap = &c
	}
	if in.Billing != nil {
		a.Billing = *in.Billing
	}
	if in.Status != nil {
		switch *in.Status {
		case storage.AccountActive:
			a.SuspendedAt = 0
		case storage.AccountSuspended:
			if a.SuspendedAt == 0 {
				a.SuspendedAt = s.now().UnixMilli()
			}
		default:
			return apierror.BadRequest("status must be active or suspended (a team whose plan ended opens again when plan_ends_at moves)")
		}
	}
	if in.PlanEnd != nil {
		a.PlanEndsAt = 0
		if !in.PlanEnd.IsZero() {
			a.PlanEndsAt = max(in.PlanEnd.UnixMilli(), 1)
		}
	}
	return nil
}

// write stores a new or changed account, and when it is closed, or was
// (wasOpen false), ends its dashboard access in the same transaction:
// sessions and links held when a plan ended stop at that moment, and must
// not come back when the team is opened again before a sweep deleted them.
// The change row tells every node's key cache.
func (s *Service) write(ctx context.Context, tx *storage.Tx, a *storage.Account, insert, wasOpen bool) error {
	var err error
	if insert {
		err = tx.InsertAccount(ctx, a)
	} else {
		err = tx.UpdateAccount(ctx, a)
	}
	if err != nil {
		return err
	}
	if !wasOpen || a.Access(s.now().UnixMilli()) != storage.AccountActive {
		if _, _, err := tx.EndTeamAccess(ctx, a.ID); err != nil {
			return err
		}
	}
	return tx.Changed(ctx, storage.KindAccount, a.ID)
}

// Create adds an account.
func (s *Service) Create(ctx context.Context, in Input) (*storage.Account, error) {
	if in.Name == nil {
		return nil, apierror.BadRequest("name is required")
	}
	if in.Plan == nil {
		return nil, apierror.BadRequest("plan is required")
	}
	a := &storage.Account{ID: "acc_" + apikey.Random(10), Billing: true, CreatedAt: s.now().UnixMilli()}
	if err := s.apply(a, in); err != nil {
		return nil, err
	}
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		return s.write(ctx, tx, a, true, true)
	})
	return a, err
}

// Get reads an account.
func (s *Service) Get(ctx context.Context, id string) (*storage.Account, error) {
	a, err := s.store.Reader().Account(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, accountNotFound()
	}
	return a, err
}

func accountNotFound() error { return apierror.NotFound("Account not found") }

// Patch changes the fields sent.
func (s *Service) Patch(ctx context.Context, id string, in Input) (*storage.Account, error) {
	var a *storage.Account
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		var err error
		if a, err = tx.LockAccount(ctx, id); errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil {
			return err
		}
		if err := RefuseClosed(a); err != nil {
			return err
		}
		wasOpen := a.Access(s.now().UnixMilli()) == storage.AccountActive
		if err := s.apply(a, in); err != nil {
			return err
		}
		return s.write(ctx, tx, a, false, wasOpen)
	})
	if err == nil && s.auth != nil {
		s.auth.ForgetAccount(id) // at once on this node; the feed tells the others
	}
	if err == nil && s.ring != nil {
		s.ring.SetAccess(a)
	}
	return a, err
}
