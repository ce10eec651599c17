package hostnames

import (
	"context"
	"errors"

	"github.com/hostmint/hostmint/problem"
	"github.com/hostmint/hostmint/storage"
)

// List returns an account's hostnames that are not released, newest first.
// Listing never renews anything.
func (s *Service) List(ctx context.Context, accountID string, limit, skip int) ([]storage.Hostname, error) {
	return s.store.Reader().ListHostnames(ctx, accountID, limit, skip)
}

// owned reads a hostname of the account inside tx; another account's
// hostname is as unknown as one that does not exist.
func owned(ctx context.Context, tx *storage.Tx, accountID, id string) (*storage.Hostname, error) {
	h, err := tx.Hostname(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && h.AccountID != accountID {
		return nil, problem.HostnameNotFound()
	}
	return h, err
}

func released(h *storage.Hostname) error {
	return problem.Conflict("hostname %s was released and cannot be changed; register a new hostname", h.Name)
}

// Get reads one hostname. [P1] reading a live hostname is authenticated use:
// it slides expires_at; an expired one is returned as it is, not revived.
func (s *Service) Get(ctx context.Context, accountID, id string) (*storage.Hostname, error) {
	var h *storage.Hostname
	err := s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		var err error
		if h, err = owned(ctx, tx, accountID, id); err != nil {
			return err
		}
		now := s.now()
		if s.cfg.Profile != 1 || s.Status(h, now) != storage.StatusLive {
			return nil
		}
		h.ExpiresAt, h.UpdatedAt = s.expiry(now), now.UnixMilli()
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return h, err
}

// UpdateInput is a PUT request, fields as sent.
type UpdateInput struct {
	IP *string
}

// Update points the hostname at a new address; [P1] it comes back live with
// expires_at moved out, even if it had expired.
func (s *Service) Update(ctx context.Context, accountID, id string, in UpdateInput) (*storage.Hostname, error) {
	var h *storage.Hostname
	err := s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		var acct *storage.Account
		var err error
		if h, acct, err = s.changeable(ctx, tx, accountID, id); err != nil {
			return err
		}
		addr, err := parseIP(in.IP)
		if err != nil {
			return err
		}
		if err := s.checkAddressPlan(acct, addr.class); err != nil {
			return err
		}
		h.IP = addr.text
		return s.touch(ctx, tx, acct, h)
	})
	return h, err
}

// Renew is the profile-1 heartbeat: expires_at moves out and an expired,
// unreleased hostname comes back live.
func (s *Service) Renew(ctx context.Context, accountID, id string) (*storage.Hostname, error) {
	var h *storage.Hostname
	err := s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		var acct *storage.Account
		var err error
		if h, acct, err = s.changeable(ctx, tx, accountID, id); err != nil {
			return err
		}
		return s.touch(ctx, tx, acct, h)
	})
	return h, err
}

// changeable reads the caller's hostname for a change, refusing a released
// one, and locks the account whose caps and plan the change is checked against.
func (s *Service) changeable(ctx context.Context, tx *storage.Tx, accountID, id string) (*storage.Hostname, *storage.Account, error) {
	h, err := owned(ctx, tx, accountID, id)
	if err != nil {
		return nil, nil, err
	}
	if h.Status == storage.StatusReleased {
		return nil, nil, released(h)
	}
	acct, err := tx.LockAccount(ctx, accountID)
	return h, acct, err
}

// touch makes h live with a fresh expiry and writes it. Reviving an expired
// hostname makes it active again, so it counts against the cap like a create.
func (s *Service) touch(ctx context.Context, tx *storage.Tx, acct *storage.Account, h *storage.Hostname) error {
	now := s.now()
	if s.Status(h, now) == StatusExpired {
		if err := s.checkCap(ctx, tx, acct, now); err != nil {
			return err
		}
	}
	h.Status, h.ExpiresAt, h.UpdatedAt = storage.StatusLive, s.expiry(now), now.UnixMilli()
	if err := tx.UpdateHostname(ctx, h); err != nil {
		return err
	}
	return tx.Changed(ctx, storage.KindHostname, h.ID)
}

// Release stops serving the hostname and retires its label. Releasing a
// released hostname changes nothing and succeeds.
func (s *Service) Release(ctx context.Context, accountID, id string) error {
	return s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		h, err := owned(ctx, tx, accountID, id)
		if err != nil || h.Status == storage.StatusReleased {
			return err
		}
		now := s.now().UnixMilli()
		h.Status, h.ReleasedAt, h.UpdatedAt = storage.StatusReleased, now, now
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		if err := tx.Retire(ctx, &storage.RetiredLabel{DomainID: h.DomainID, Label: h.Label, AccountID: accountID, RetiredAt: now}); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
}
