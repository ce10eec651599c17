// Package idempotency keeps the first answer to a create that carried an
// Idempotency-Key, so that a client retrying after a broken connection or
// a 503 (a database failover) gets that answer again instead of a second
// object. The answer is kept in the create's own transaction: it exists
// exactly when the create committed.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// Retention is how long a key's answer is kept: a retry within it is
// answered from it, a later one runs as a new request.
const Retention = 24 * time.Hour

// MaxKey is the longest key taken, in bytes.
const MaxKey = 255

// Request is one request that carried a key.
type Request struct {
	// Scope is whose key it is, the credential that authenticated the
	// request: "key:<id>" for an API key, "admin" for the operator. It has
	// no default: a request without one is refused, never kept.
	Scope string
	Key   string
	// Request is what must be the same on a retry: method, path and body.
	Request []byte
	// Secret: the answer holds a secret shown once (a key, a password).
	// It is kept sealed; without an encryption key it is not kept, and a
	// retry is refused (the object exists; its secret is not repeated).
	Secret bool
}

// Answer is a request's answer: what is written back.
type Answer struct {
	Status int
	Body   []byte
	// Replayed: the answer of an earlier request with the same key.
	Replayed bool
}

// Service keeps answers in a store.
type Service struct {
	store *storage.Store
	key   seal.Key
	now   func() time.Time
}

// New is a Service on store; key seals answers that hold secrets (nil:
// none is configured).
func New(store *storage.Store, key seal.Key) *Service {
	return &Service{store: store, key: key, now: time.Now}
}

// Check refuses a key that is not one: empty, too long, or not visible
// ASCII (RFC 9110 field values allow more, but a key is an opaque token).
func Check(key string) error {
	if key == "" || len(key) > MaxKey {
		return apierror.BadRequest("Idempotency-Key must be 1 to %d characters", MaxKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return apierror.BadRequest("Idempotency-Key must be visible ASCII characters (no spaces)")
		}
	}
	return nil
}

// errNoScope: a caller asked to keep an answer for no credential, whose
// keys would be everyone's.
var errNoScope = errors.New("idempotency: a key needs the scope of the credential that sent it")

// errTaken: another request holding the key committed first.
var errTaken = errors.New("idempotency: key taken meanwhile")

// Do answers req: with the answer kept for its key when there is one,
// else by running create, whose writes join one transaction with the
// kept answer. A create that fails keeps nothing, so its retry runs
// again. The same key with another request is CONFLICT.
func (s *Service) Do(ctx context.Context, req Request, create func(ctx context.Context) (Answer, error)) (Answer, error) {
	if err := Check(req.Key); err != nil {
		return Answer{}, err
	}
	if req.Scope == "" {
		return Answer{}, errNoScope
	}
	sum := sha256.Sum256(req.Request)
	fingerprint := hex.EncodeToString(sum[:])
	if a, err := s.kept(ctx, req, fingerprint); !errors.Is(err, storage.ErrNotFound) {
		return a, err
	}
	var out Answer
	err := s.store.WriteAll(ctx, func(ctx context.Context, tx *storage.Tx) error {
		now := s.now()
		k := &storage.IdempotencyKey{Scope: req.Scope, Key: req.Key, Fingerprint: fingerprint, CreatedAt: now.UnixMilli()}
		// Claimed first: on PostgreSQL a concurrent request with the key
		// waits here until this one ends, and then is answered from it.
		if err := tx.ClaimIdempotencyKey(ctx, k, now.Add(-Retention).UnixMilli()); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return errTaken
			}
			return err
		}
		var err error
		if out, err = create(ctx); err != nil {
			return err
		}
		k.Status, k.Answer = out.Status, string(out.Body)
		if req.Secret {
			if k.Answer, err = s.seal(k, out.Body); err != nil {
				return err
			}
			k.Sealed = k.Answer != ""
		}
		return tx.KeepAnswer(ctx, k)
	})
	if errors.Is(err, errTaken) {
		return s.kept(ctx, req, fingerprint)
	}
	return out, err
}

// kept is the answer kept for req's key, ErrNotFound when there is none.
func (s *Service) kept(ctx context.Context, req Request, fingerprint string) (Answer, error) {
	k, err := s.store.Reader().IdempotencyKey(ctx, req.Scope, req.Key, s.now().Add(-Retention).UnixMilli())
	if err != nil {
		return Answer{}, err
	}
	if k.Fingerprint != fingerprint {
		return Answer{}, apierror.Conflict("this Idempotency-Key was used within 24 hours for another request " +
			"(another method, path or body): use a new key for a new request")
	}
	body := []byte(k.Answer)
	switch {
	case k.Sealed:
		if body, err = s.key.Open(k.Answer, label(k)); err != nil {
			return Answer{}, err
		}
	case req.Secret:
		return Answer{}, apierror.Conflict("the request with this Idempotency-Key succeeded already; " +
			"its secret was shown once and is not kept (no encryption key is configured): list the objects to find it")
	}
	return Answer{Status: k.Status, Body: body, Replayed: true}, nil
}

// seal seals an answer that holds a secret; "" when no key is configured.
func (s *Service) seal(k *storage.IdempotencyKey, body []byte) (string, error) {
	if len(s.key) == 0 {
		return "", nil
	}
	return s.key.Seal(body, label(k))
}

// label binds a sealed answer to its row.
func label(k *storage.IdempotencyKey) string {
	return "idempotency-key:" + k.Scope + ":" + k.Key
}

// Purge deletes the answers older than Retention.
func (s *Service) Purge(ctx context.Context) (int64, error) {
	return s.store.PurgeIdempotencyKeys(ctx, s.now().Add(-Retention).UnixMilli())
}
