package storage

import (
	"context"
	"database/sql"

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

// accountOpen is Account.Access's "active" in SQL, over accounts AS a;
// its one argument is now.
const accountOpen = "a.closed_at = 0 AND a.suspended_at = 0 AND (a.plan_ends_at = 0 OR a.plan_ends_at > ?)"

// teamOpen is the condition that the row's account_id names an account
// open at now (its one argument). Correlated, so that each row looks its
// account up by key, whatever the number of accounts.
const teamOpen = "EXISTS (SELECT 1 FROM accounts AS a WHERE a.id = ?TableAlias.account_id AND " + accountOpen + ")"

// Session reads a session that has not expired at now and whose team (if
// it is not the operator's) is open; ErrNotFound otherwise. The team is
// read here, in the same query, so that a suspension or a plan's end holds
// on every node from its moment on, whatever a sweep has done yet.
func (q Queries) Session(ctx context.Context, id string, now int64) (*Session, error) {
	s := new(Session)
	err := q.db.NewSelect().Model(s).Where("id = ? AND expires_at > ?", id, now).
		Where("(?TableAlias.account_id = '' OR "+teamOpen+")", now).Scan(ctx)
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
		Where("id = ? AND used_at = 0 AND expires_at > ?", id, now).
		Where(teamOpen, now).Exec(ctx)
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

// TeamAccess is what can open an account's dashboard at now: its live
// sessions and its unused sign-in links, oldest first.
func (q Queries) TeamAccess(ctx context.Context, accountID string, now int64) ([]Session, []SigninLink, error) {
	ss := []Session{}
	err := q.db.NewSelect().Model(&ss).Where("account_id = ? AND expires_at > ?", accountID, now).
		OrderExpr("created_at, id").Scan(ctx)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	ls := []SigninLink{}
	err = q.db.NewSelect().Model(&ls).Where("account_id = ? AND used_at = 0 AND expires_at > ?", accountID, now).
		OrderExpr("created_at, id").Scan(ctx)
	return ss, ls, mapErr(err)
}

// EndTeamSession deletes one session of an account; false when it has no
// such session.
func (q Queries) EndTeamSession(ctx context.Context, accountID, id string) (bool, error) {
	res, err := q.db.NewDelete().Model((*Session)(nil)).Where("id = ? AND account_id = ?", id, accountID).
		Where("account_id <> ''").Exec(ctx)
	return affected(res, err)
}

// EndSigninLink deletes one unused sign-in link of an account; false when
// it has no such link.
func (q Queries) EndSigninLink(ctx context.Context, accountID, id string) (bool, error) {
	res, err := q.db.NewDelete().Model((*SigninLink)(nil)).Where("id = ? AND account_id = ? AND used_at = 0", id, accountID).Exec(ctx)
	return affected(res, err)
}

// EndTeamAccess deletes every session and sign-in link of an account, and
// says how many sessions and unused links there were.
func (q Queries) EndTeamAccess(ctx context.Context, accountID string) (sessions, links int, err error) {
	res, err := q.db.NewDelete().Model((*Session)(nil)).Where("account_id = ? AND account_id <> ''", accountID).Exec(ctx)
	if err != nil {
		return 0, 0, mapErr(err)
	}
	n, _ := res.RowsAffected()
	sessions = int(n)
	// Used links are spent already: not counted, but gone with the rest.
	unused, err := q.db.NewSelect().Model((*SigninLink)(nil)).Where("account_id = ? AND used_at = 0", accountID).Count(ctx)
	if err != nil {
		return 0, 0, mapErr(err)
	}
	_, err = q.db.NewDelete().Model((*SigninLink)(nil)).Where("account_id = ?", accountID).Exec(ctx)
	return sessions, int(unused), mapErr(err)
}

// PlansEnded lists the accounts whose plan ended after after (at least 0)
// and by through (Unix ms), by the index on plan_ends_at: a sweep's cost
// follows the plans that ended since the last one, not the accounts.
func (q Queries) PlansEnded(ctx context.Context, after, through int64) ([]string, error) {
	ids := []string{}
	err := q.db.NewSelect().Model((*Account)(nil)).Column("id").
		Where("plan_ends_at > ? AND plan_ends_at <= ?", max(after, 0), through).
		OrderExpr("plan_ends_at, id").Scan(ctx, &ids)
	return ids, mapErr(err)
}

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
