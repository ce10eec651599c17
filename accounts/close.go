package accounts

import (
	"context"
	"errors"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// Closed is what closing an account ended.
type Closed struct {
	Closed            bool `json:"closed"`
	HostnamesReleased int  `json:"hostnames_released"`
	KeysRevoked       int  `json:"keys_revoked"`
	TSIGKeysRevoked   int  `json:"tsig_keys_revoked"`
	Ended
}

// RefuseClosed is the answer to a change of a closed account (409), nil
// for any other: a closed account takes no new credential, plan or domain.
func RefuseClosed(a *storage.Account) error {
	if a.ClosedAt != 0 {
		return apierror.Conflict("account %s is closed", a.ID)
	}
	return nil
}

// Close ends an account for good, in one transaction: its hostnames are
// released (no longer answered, their labels retired for it), its API
// keys and TSIG keys revoked, its sessions and sign-in links deleted. The
// change rows tell every node; this node forgets them at once. The row
// stays (status closed) for the audit log. Closing a closed account
// changes nothing and succeeds.
func (s *Service) Close(ctx context.Context, id string) (*storage.Account, Closed, error) {
	var (
		a    *storage.Account
		c    Closed
		keys []string
		tsig []string
	)
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		c, keys, tsig = Closed{Closed: true}, nil, nil
		var err error
		if a, err = tx.LockAccount(ctx, id); errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil || a.ClosedAt != 0 {
			return err
		}
		// Named first, the account is the object the audit entry names.
		if err := tx.Changed(ctx, storage.KindAccount, id); err != nil {
			return err
		}
		now := s.now().UnixMilli()
		a.ClosedAt = now
		ks, err := tx.Keys(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range ks {
			if err := tx.RevokeKey(ctx, k.ID, now); err != nil {
				return err
			}
			keys = append(keys, k.ID)
			if err := tx.Changed(ctx, storage.KindKey, k.ID); err != nil {
				return err
			}
		}
		ts, err := tx.TSIGKeys(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range ts {
			if err := tx.RevokeTSIGKey(ctx, k.ID, now); err != nil {
				return err
			}
			tsig = append(tsig, k.ID)
			if err := tx.Changed(ctx, storage.KindTSIGKey, k.ID); err != nil {
				return err
			}
		}
		if c.HostnamesReleased, err = tx.ReleaseHostnames(ctx, storage.HostnameSet{AccountID: id}, now); err != nil {
			return err
		}
		if c.Sessions, c.SigninLinks, err = tx.EndTeamAccess(ctx, id); err != nil {
			return err
		}
		// The row and its change last: the other nodes' key caches read
		// the account when they apply it (write ends access again; none is left).
		return s.write(ctx, tx, a, false, true)
	})
	if err != nil {
		return nil, Closed{}, err
	}
	c.KeysRevoked, c.TSIGKeysRevoked = len(keys), len(tsig)
	if s.auth != nil {
		for _, k := range keys {
			s.auth.Forget(k)
		}
		s.auth.ForgetAccount(id)
	}
	if s.ring != nil {
		for _, k := range tsig {
			s.ring.Forget(k)
		}
		s.ring.SetAccess(a)
	}
	return a, c, nil
}
