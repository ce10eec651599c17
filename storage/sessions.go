package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// Session is a signed-in dashboard browser. ID is the hash of the secret the
// browser holds in its cookie; the secret itself is never stored.
type Session struct {
	bun.BaseModel `bun:"table:dashboard_sessions"`

	ID        string `bun:"id,pk"`
	AccountID string `bun:"account_id"` // "" for the operator
	ExpiresAt int64  `bun:"expires_at"`
	CreatedAt int64  `bun:"created_at"`
	GrantHash string `bun:"grant_hash"` // operator: a salted, slow hash of the admin token it was started with
}

// SigninLink is a one-time sign-in for a team member. ID is the hash of the
// token in the link.
type SigninLink struct {
	bun.BaseModel `bun:"table:signin_links"`

	ID        string `bun:"id,pk"`
	AccountID string `bun:"account_id"`
	ExpiresAt int64  `bun:"expires_at"`
	UsedAt    int64  `bun:"used_at"`
	CreatedAt int64  `bun:"created_at"`
}

// InsertSession inserts s.
func (q Queries) InsertSession(ctx context.Context, s *Session) error {
	_, err := q.db.NewInsert().Model(s).Exec(ctx)
	return mapErr(err)
}

// Session reads a session that has not expired at now; ErrNotFound otherwise.
func (q Queries) Session(ctx context.Context, id string, now int64) (*Session, error) {
	s := new(Session)
	err := q.db.NewSelect().Model(s).Where("id = ? AND expires_at > ?", id, now).Scan(ctx)
	return s, mapErr(err)
}

// DeleteSession removes a session; removing one that is gone is no error.
func (q Queries) DeleteSession(ctx context.Context, id string) error {
	_, err := q.db.NewDelete().Model((*Session)(nil)).Where("id = ?", id).Exec(ctx)
	return mapErr(err)
}

// InsertSigninLink inserts l.
func (q Queries) InsertSigninLink(ctx context.Context, l *SigninLink) error {
	_, err := q.db.NewInsert().Model(l).Exec(ctx)
	return mapErr(err)
}

// UseSigninLink marks a link used at now and returns its account; ErrNotFound
// when there is no such link, or it is used or expired. The conditional
// update is what makes a link good for one sign-in even when two nodes are
// handed it at the same moment.
func (q Queries) UseSigninLink(ctx context.Context, id string, now int64) (string, error) {
	res, err := q.db.NewUpdate().Model((*SigninLink)(nil)).Set("used_at = ?", now).
		Where("id = ? AND used_at = 0 AND expires_at > ?", id, now).Exec(ctx)
	if err != nil {
		return "", mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", ErrNotFound
	}
	l := new(SigninLink)
	if err := q.db.NewSelect().Model(l).Column("account_id").Where("id = ?", id).Scan(ctx); err != nil {
		return "", mapErr(err)
	}
	return l.AccountID, nil
}

// PurgeDashboard deletes the sessions and sign-in links that expired before
// now: neither can be used any more, and nothing else would remove them.
func (q Queries) PurgeDashboard(ctx context.Context, now int64) error {
	if _, err := q.db.NewDelete().Model((*Session)(nil)).Where("expires_at <= ?", now).Exec(ctx); err != nil {
		return mapErr(err)
	}
	_, err := q.db.NewDelete().Model((*SigninLink)(nil)).Where("expires_at <= ?", now).Exec(ctx)
	return mapErr(err)
}
