package accounts

import (
	"context"
	"time"

	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// TSIG keys sign DNS UPDATE messages (RFC 2136, RFC 8945). They are an
// account's credentials beside its API keys, with the same scopes and
// reach; TSIG needs the secret itself, so it is sealed with the
// certificate encryption key (sealLabel binds it to its key name).

// TSIG algorithms a key may use (the API's names; the wire's end in a dot).
const (
	HMACSHA256 = "hmac-sha256"
	HMACSHA512 = "hmac-sha512"
)

// MaxTSIGKeys is the number of TSIG keys an account may hold at once.
const MaxTSIGKeys = 10

// tsigIssues bounds the TSIG keys an account may issue: every new or
// revoked key reloads each node's DNS servers (at most once a second), so
// a loop of creates and revokes must not become a loop of reloads.
var tsigIssues = ratelimit.Limit{Kind: "tsig-key", Max: 20, Window: time.Hour, What: "TSIG keys issued"}

// TSIGInput is a TSIG key create request.
type TSIGInput struct {
	Name      string
	Scopes    []access.Scope // none: all three on the whole team, or the issuer's own
	Algorithm string         // "" is HMACSHA256
}

// NewTSIGKey is a created key; Secret (base64) is shown once.
type NewTSIGKey struct {
	Key    *storage.TSIGKey
	Secret string
	Scopes []access.Scope
}

func sealLabel(keyName string) string { return "tsig:" + keyName }

// OpenTSIGSecret unseals a stored key's secret (base64, as TSIG takes it).
func OpenTSIGSecret(k seal.Key, row *storage.TSIGKey) (string, error) {
	b, err := k.Open(row.SecretSealed, sealLabel(row.KeyName))
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// CreateTSIGKey makes a TSIG key for an account. by is the bearer key that
// asks (nil for the operator): it must hold a write scope (a TSIG key is
// for DNS UPDATE, and each new one costs a reload of every node and one of
// the team's issues an hour, not for a key that only reads to spend), it
// can only issue a key within its own scopes and reach, and without
// scopes the new key gets exactly its own.
func (s *Service) CreateTSIGKey(ctx context.Context, accountID string, by *access.Principal, in TSIGInput) (*NewTSIGKey, error) {
	if by != nil {
		if err := by.RequireWrite("issuing a TSIG key"); err != nil {
			return nil, err
		}
	}
	if len(in.Name) > 200 {
		return nil, apierror.BadRequest("name must be at most 200 characters")
	}
	switch in.Algorithm {
	case "":
		in.Algorithm = HMACSHA256
	case HMACSHA256, HMACSHA512:
	default:
		return nil, apierror.BadRequest("algorithm must be %s or %s, got %q", HMACSHA256, HMACSHA512, in.Algorithm)
	}
	if len(s.seal) == 0 {
		return nil, apierror.NotImplemented("TSIG keys are kept sealed with the certificate encryption key, and this deployment has none configured (cert_encryption_key_file)")
	}
	scopes := in.Scopes
	if len(scopes) == 0 {
		scopes = access.All()
		if by != nil {
			scopes = by.Scopes
		}
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	id := "t" + apikey.Random(10)
	k := &storage.TSIGKey{ID: id, AccountID: accountID, Name: in.Name, KeyName: id + ".tsig",
		Algorithm: in.Algorithm, CreatedAt: s.now().UnixMilli()}
	var err error
	if k.SecretSealed, err = s.seal.Seal(raw, sealLabel(k.KeyName)); err != nil {
		return nil, err
	}
	err = s.issue(ctx, accountID, scopes, by, issued{
		what: "TSIG keys", max: MaxTSIGKeys,
		count: func(ctx context.Context, tx *storage.Tx) (int, error) { return tx.CountTSIGKeys(ctx, accountID) },
		insert: func(ctx context.Context, tx *storage.Tx, scopes string) error {
			k.Scopes = scopes
			if by != nil {
				// A key a bearer issues lives no longer than the bearer:
				// its expiry, and its revocation (RevokeKey, which
				// revokes what it issued and waits for this lock).
				issuer, err := s.lockIssuer(ctx, tx, by.KeyID)
				if err != nil {
					return err
				}
				k.IssuedBy, k.ExpiresAt = issuer.ID, issuer.ExpiresAt
			}
			if err := ratelimit.Take(ctx, tx, accountID, tsigIssues, s.now()); err != nil {
				return err
			}
			if err := tx.InsertTSIGKey(ctx, k); err != nil {
				return err
			}
			return tx.Changed(ctx, storage.KindTSIGKey, k.ID)
		},
	})
	if err != nil {
		return nil, err
	}
	return &NewTSIGKey{Key: k, Secret: base64.StdEncoding.EncodeToString(raw), Scopes: scopes}, nil
}

// lockIssuer reads the API key id that issues a credential, locked
// against its revocation until tx ends, and refuses as Authenticate would
// if it no longer authenticates: it was checked when the request came in,
// and may have been revoked (or expired) since. A create that passes
// commits before the revocation, which then revokes what it made.
func (s *Service) lockIssuer(ctx context.Context, tx *storage.Tx, id string) (*storage.APIKey, error) {
	k, err := tx.LockKey(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && k.RevokedAt != 0 {
		return nil, apierror.Unauthorized()
	} else if err != nil {
		return nil, err
	}
	if k.ExpiresAt != 0 && s.now().UnixMilli() >= k.ExpiresAt {
		return nil, apierror.New(apierror.CodeKeyExpired, "API key expired at %s; create a new key", stamp(k.ExpiresAt))
	}
	return k, nil
}

// within is nil when every scope in scopes is one that by holds, with a
// reach inside by's: a key cannot mint a key that does more than it may.
func within(ctx context.Context, q storage.Queries, by *access.Principal, scopes []access.Scope) error {
	for i, sc := range scopes {
		t := access.Target{Hostname: sc.Hostname, Domain: sc.Domain}
		if sc.Hostname != "" {
			h, err := q.Hostname(ctx, sc.Hostname)
			if err != nil {
				return err
			}
			t.Name = h.Name
			t.Domain = h.Zone()
		}
		if sc.Hostname == "" && sc.Domain == "" {
			if by.Reach(sc.Scope).Team {
				continue
			}
		} else if by.Allows(sc.Scope, t) {
			continue
		}
		if err := by.Require(sc.Scope, t); err != nil {
			p, _ := apierror.As(err)
			return apierror.Forbidden("scopes[%d] reaches beyond the key that asks: %s", i, p.Message)
		}
		return apierror.Forbidden("scopes[%d] reaches beyond the key that asks: it grants %s on the whole team", i, sc.Scope)
	}
	return nil
}

// TSIGKeys lists an account's TSIG keys (not revoked), without secrets;
// by (a bearer key, nil for the operator and the dashboard) sees only the
// keys within its own scopes and reach.
func (s *Service) TSIGKeys(ctx context.Context, accountID string, by *access.Principal) ([]storage.TSIGKey, error) {
	if _, err := s.Get(ctx, accountID); err != nil {
		return nil, err
	}
	q := s.store.Reader()
	ks, err := q.TSIGKeys(ctx, accountID)
	if err != nil || by == nil {
		return ks, err
	}
	out := ks[:0]
	for _, k := range ks {
		err := within(ctx, q, by, access.ParseScopes(k.Scopes))
		if _, refused := apierror.As(err); refused {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// RevokeTSIGKey stops a TSIG key signing, on every node at once (the change
// feed drops it from every node's key set). accountID, when not empty, is
// the only account whose key may be revoked (a bearer's own team, or the
// dashboard's); by, a bearer key, may revoke only keys within its own
// scopes and reach. A key it may not revoke is not found.
func (s *Service) RevokeTSIGKey(ctx context.Context, accountID string, by *access.Principal, id string) error {
	_, err := s.store.WriteGrouped(ctx, accountID+id, func(ctx context.Context, tx *storage.Tx) error {
		k, err := tx.TSIGKey(ctx, id)
		if errors.Is(err, storage.ErrNotFound) || err == nil && (k.RevokedAt != 0 || accountID != "" && k.AccountID != accountID) {
			return apierror.NotFound("TSIG key not found")
		} else if err != nil {
			return err
		}
		if by != nil {
			err := within(ctx, tx.Queries, by, access.ParseScopes(k.Scopes))
			if _, refused := apierror.As(err); refused {
				return apierror.NotFound("TSIG key not found")
			} else if err != nil {
				return err
			}
		}
		if err := tx.RevokeTSIGKey(ctx, id, s.now().UnixMilli()); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindTSIGKey, id)
	})
	if err == nil && s.ring != nil {
		s.ring.Forget(id) // at once on this node; the feed tells the others
	}
	return err
}
