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

// accountOpen is Account.Access's "active" in SQL over the accounts
// table's columns, prefixed with alias ("a." or ""); its one argument is now.
func accountOpen(alias string) string {
	return alias + "suspended_at = 0 AND (" + alias + "plan_ends_at = 0 OR " + alias + "plan_ends_at > ?)"
}

// openAccounts is a subquery of the ids of accounts open at now.
func (q Queries) openAccounts(now int64) *bun.SelectQuery {
	return q.db.NewSelect().Model((*Account)(nil)).Column("id").Where(accountOpen(""), now)
}

// Session reads a session that has not expired at now and whose team (if
// it is not the operator's) is open; ErrNotFound otherwise. The team is
// read here, in the same query, so that a suspension or a plan's end holds
// on every node from its moment on, whatever a sweep has done yet.
func (q Queries) Session(ctx context.Context, id string, now int64) (*Session, error) {
	s := new(Session)
	err := q.db.NewSelect().Model(s).Where("id = ? AND expires_at > ?", id, now).
		WhereGroup(" AND ", func(sq *bun.SelectQuery) *bun.SelectQuery {
			return sq.Where("account_id = ''").WhereOr("account_id IN (?)", q.openAccounts(now))
		}).Scan(ctx)
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
		Where("account_id IN (?)", q.openAccounts(now)).Exec(ctx)
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

// ClosedTeamsWithAccess lists the accounts closed at now that still hold
// sessions or sign-in links: those whose plan ended since the last sweep
// (a suspension ends them in its own transaction). It is driven from the
// two small tables, each row looking up its account by key, so its cost
// follows the sessions and links held, not the number of accounts.
func (q Queries) ClosedTeamsWithAccess(ctx context.Context, now int64) ([]string, error) {
	closed := "NOT (" + accountOpen("a.") + ")"
	var ids []string
	err := q.db.NewRaw(`SELECT s.account_id FROM dashboard_sessions AS s JOIN accounts AS a ON a.id = s.account_id WHERE `+closed+`
UNION SELECT l.account_id FROM signin_links AS l JOIN accounts AS a ON a.id = l.account_id WHERE `+closed+`
ORDER BY 1`, now, now).Scan(ctx, &ids)
	return ids, mapErr(err)
}

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
