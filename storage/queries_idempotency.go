package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// IdempotencyKey is the first answer to a request that carried an
// Idempotency-Key, kept for its retries. Scope is whose key it is (an
// account, or the operator), so that callers cannot read each other's.
// An answer that holds a secret is kept only sealed.
type IdempotencyKey struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	Scope       string `bun:"scope,pk"`
	Key         string `bun:"key,pk"`
	Fingerprint string `bun:"fingerprint"` // of the request: method, path and body
	Status      int    `bun:"status"`
	Answer      string `bun:"answer"`
	Sealed      bool   `bun:"sealed"`
	CreatedAt   int64  `bun:"created_at"`
}

// IdempotencyKey reads the answer kept for scope's key, if it was made
// after since (Unix ms).
func (q Queries) IdempotencyKey(ctx context.Context, scope, key string, since int64) (*IdempotencyKey, error) {
	k := new(IdempotencyKey)
	err := q.db.NewSelect().Model(k).Where("scope = ? AND key = ? AND created_at > ?", scope, key, since).Scan(ctx)
	return k, mapErr(err)
}

// ClaimIdempotencyKey inserts k, the claim of a request about to run
// (its answer set by KeepAnswer before it commits). A claim older than
// since is replaced; a newer one is ErrConflict: the key is taken.
func (q Queries) ClaimIdempotencyKey(ctx context.Context, k *IdempotencyKey, since int64) error {
	if _, err := q.db.NewDelete().Model((*IdempotencyKey)(nil)).
		Where("scope = ? AND key = ? AND created_at <= ?", k.Scope, k.Key, since).Exec(ctx); err != nil {
		return mapErr(err)
	}
	_, err := q.db.NewInsert().Model(k).Exec(ctx)
	return mapErr(err)
}

// KeepAnswer sets the answer of a claimed key.
func (q Queries) KeepAnswer(ctx context.Context, k *IdempotencyKey) error {
	_, err := q.db.NewUpdate().Model(k).Column("status", "answer", "sealed").WherePK().Exec(ctx)
	return mapErr(err)
}

// PurgeIdempotencyKeys deletes the answers made before cutoff (Unix ms),
// oldest first, about purgeBatch a transaction found through the index on
// created_at, and returns how many it deleted.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, cutoff int64) (int64, error) {
	return s.purgeBefore(ctx, (*IdempotencyKey)(nil), "created_at", cutoff)
}
