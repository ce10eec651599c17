package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hostmint/hostmint/ratelimit"
	"time"

	"github.com/hostmint/hostmint/access"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
)

// KeyInput is a key create request.
type KeyInput struct {
	Name      string
	Scopes    []access.Scope
	ExpiresAt *time.Time
	// Operator: the operator issues it (not counted against keyIssues).
	Operator bool
}

// NewKey is a created key; Token is shown once and never stored.
type NewKey struct {
	Key    *storage.APIKey
	Token  string
	Scopes []access.Scope
}

// keyIssues bounds the API keys a team issues itself (the operator's
// are not counted: a team's churn must not keep it from a replacement key):
// twice the MaxKeys it may hold, so that replacing every key at once is never refused, while
// create-and-revoke in a loop makes at most this many rows an hour (and
// revoked ones are purged a week after, storage.PurgeRevokedKeys).
var keyIssues = ratelimit.Limit{Kind: "api-key", Max: 2 * MaxKeys, Window: time.Hour, What: "API keys issued"}

// CreateKey makes a key for an account.
func (s *Service) CreateKey(ctx context.Context, accountID string, in KeyInput) (*NewKey, error) {
	if len(in.Name) > 200 {
		return nil, apierror.BadRequest("name must be at most 200 characters")
	}
	now := s.now()
	var exp int64
	if in.ExpiresAt != nil {
		if !in.ExpiresAt.After(now) {
			return nil, apierror.BadRequest("expires_at must be in the future")
		}
		exp = in.ExpiresAt.UnixMilli()
	}
	scopes := in.Scopes
	if len(scopes) == 0 {
		scopes = access.All()
	}
	id, secret, token := apikey.New()
	k := &storage.APIKey{ID: id, AccountID: accountID, Name: in.Name, SecretHash: apikey.Hash(secret),
		ExpiresAt: exp, CreatedAt: now.UnixMilli()}
	err := s.issue(ctx, accountID, scopes, nil, issued{
		what: "keys", max: MaxKeys,
		count: func(ctx context.Context, tx *storage.Tx) (int, error) {
			return tx.CountKeys(ctx, accountID, now.UnixMilli())
		},
		insert: func(ctx context.Context, tx *storage.Tx, scopes string) error {
			k.Scopes = scopes
			if !in.Operator {
				if err := ratelimit.Take(ctx, tx, accountID, keyIssues, now); err != nil {
					return err
				}
			}
			if err := tx.InsertKey(ctx, k); err != nil {
				return err
			}
			return tx.Changed(ctx, storage.KindKey, k.ID)
		},
	})
	if err != nil {
		return nil, err
	}
	return &NewKey{Key: k, Token: token, Scopes: scopes}, nil
}

// issued is a credential being issued: how the account's are counted
// against max, and how the new one is stored (with its scopes as JSON).
type issued struct {
	what   string
	max    int
	count  func(ctx context.Context, tx *storage.Tx) (int, error)
	insert func(ctx context.Context, tx *storage.Tx, scopes string) error
}

// issue stores a credential of an account with scopes, in one transaction:
// the account exists, the scopes are known and reach what is the
// account's (and, when by asks, within by's own), and the account holds
// fewer than c.max.
func (s *Service) issue(ctx context.Context, accountID string, scopes []access.Scope, by *access.Principal, c issued) error {
	_, err := s.store.WriteGrouped(ctx, accountID, func(ctx context.Context, tx *storage.Tx) error {
		if a, err := tx.LockAccount(ctx, accountID); errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil {
			return err
		} else if err := RefuseClosed(a); err != nil {
			return err
		}
		if err := s.checkScopes(ctx, tx, accountID, scopes); err != nil {
			return err
		}
		if by != nil {
			if err := within(ctx, tx.Queries, by, scopes); err != nil {
				return err
			}
		}
		n, err := c.count(ctx, tx)
		if err != nil {
			return err
		}
		if n >= c.max {
			return apierror.Conflict("the account already holds %d %s; revoke one first", c.max, c.what)
		}
		b, _ := json.Marshal(scopes)
		return c.insert(ctx, tx, string(b))
	})
	return err
}

func (s *Service) checkScopes(ctx context.Context, tx *storage.Tx, accountID string, scopes []access.Scope) error {
	var domains []storage.Domain
	for i, sc := range scopes {
		if !access.Known(sc.Scope) {
			return apierror.BadRequest("scopes[%d].scope must be hostnames:read, hostnames:write or dns01:write, got %q", i, sc.Scope)
		}
		switch {
		case sc.Domain != "" && sc.Hostname != "":
			return apierror.BadRequest("scopes[%d] names both a domain and a hostname; a reach is one of them", i)
		case sc.Hostname != "":
			h, err := tx.Hostname(ctx, sc.Hostname)
			if errors.Is(err, storage.ErrNotFound) || err == nil && h.AccountID != accountID {
				return apierror.BadRequest("scopes[%d].hostname %q is not a hostname of this account", i, sc.Hostname)
			} else if err != nil {
				return err
			}
		case sc.Domain != "":
			if domains == nil {
				var err error
				if domains, err = tx.Domains(ctx); err != nil {
					return err
				}
			}
			if !hasDomain(domains, sc.Domain) {
				return apierror.BadRequest("scopes[%d].domain %q is not a domain of this service", i, sc.Domain)
			}
		}
	}
	return nil
}

func hasDomain(ds []storage.Domain, name string) bool {
	for _, d := range ds {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Keys lists an account's keys (not revoked), without secrets.
func (s *Service) Keys(ctx context.Context, accountID string) ([]storage.APIKey, error) {
	if _, err := s.Get(ctx, accountID); err != nil {
		return nil, err
	}
	return s.store.Reader().Keys(ctx, accountID)
}

// RevokeKey stops a key authenticating, on every node (through the change
// feed, which drops it from every node's cache).
func (s *Service) RevokeKey(ctx context.Context, keyID string) error {
	var issued []string // the TSIG keys it issued, which go with it
	_, err := s.store.WriteGrouped(ctx, keyID, func(ctx context.Context, tx *storage.Tx) error {
		now := s.now().UnixMilli()
		if err := tx.RevokeKey(ctx, keyID, now); errors.Is(err, storage.ErrNotFound) {
			return apierror.NotFound("Key not found")
		} else if err != nil {
			return err
		}
		var err error
		if issued, err = tx.RevokeTSIGKeysIssuedBy(ctx, keyID, now); err != nil {
			return err
		}
		for _, id := range issued {
			if err := tx.Changed(ctx, storage.KindTSIGKey, id); err != nil {
				return err
			}
		}
		return tx.Changed(ctx, storage.KindKey, keyID)
	})
	if err == nil && s.auth != nil {
		s.auth.Forget(keyID) // at once on this node; the feed tells the others
	}
	if err == nil && s.ring != nil {
		for _, id := range issued {
			s.ring.Forget(id)
		}
	}
	return err
}
