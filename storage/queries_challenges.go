package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// InsertCredential inserts c.
func (q Queries) InsertCredential(ctx context.Context, c *Credential) error {
	_, err := q.db.NewInsert().Model(c).Exec(ctx)
	if err == nil {
		q.made("credential", c.ID)
	}
	return mapErr(err)
}

// Credential reads one credential by username.
func (q Queries) Credential(ctx context.Context, username string) (*Credential, error) {
	c := new(Credential)
	err := q.db.NewSelect().Model(c).Where("id = ?", username).Scan(ctx)
	return c, mapErr(err)
}

// CountCredentials counts a hostname's credentials.
func (q Queries) CountCredentials(ctx context.Context, hostnameID string) (int, error) {
	n, err := q.db.NewSelect().Model((*Credential)(nil)).Where("hostname_id = ?", hostnameID).Count(ctx)
	return int(n), mapErr(err)
}

// AddChallenge stores a value and keeps only the keep newest of the
// hostname. A value sent again (a client's retry) moves to the front
// rather than taking a second slot and pushing out the other value.
func (q Queries) AddChallenge(ctx context.Context, c *Challenge, keep int) error {
	if _, err := q.db.NewDelete().Model((*Challenge)(nil)).
		Where("hostname_id = ? AND value = ?", c.HostnameID, c.Value).Exec(ctx); err != nil {
		return mapErr(err)
	}
	if _, err := q.db.NewInsert().Model(c).Returning("id").Exec(ctx); err != nil {
		return mapErr(err)
	}
	newest := q.db.NewSelect().Model((*Challenge)(nil)).Column("id").
		Where("hostname_id = ?", c.HostnameID).OrderExpr("id DESC").Limit(int64(keep))
	_, err := q.db.NewDelete().Model((*Challenge)(nil)).
		Where("hostname_id = ? AND id NOT IN (?)", c.HostnameID, newest).Exec(ctx)
	return mapErr(err)
}

// Challenges lists the challenge values of hostnames, newest first.
func (q Queries) Challenges(ctx context.Context, hostnameIDs ...string) ([]Challenge, error) {
	cs := []Challenge{}
	if len(hostnameIDs) == 0 {
		return cs, nil
	}
	err := q.challenges(&cs, hostnameIDs).Scan(ctx)
	return cs, mapErr(err)
}

// challenges is Challenges' read, into cs.
func (q Queries) challenges(cs *[]Challenge, hostnameIDs []string) *bun.SelectQuery {
	return q.db.NewSelect().Model(cs).Where("hostname_id IN (?)", bun.In(hostnameIDs)).OrderExpr("id DESC")
}

// LastChallenge is the newest value written for a hostname, if any.
func (q Queries) LastChallenge(ctx context.Context, hostnameID string) (*Challenge, error) {
	c := new(Challenge)
	err := q.db.NewSelect().Model(c).Where("hostname_id = ?", hostnameID).OrderExpr("id DESC").Limit(1).Scan(ctx)
	return c, mapErr(err)
}

// ScanChallenges calls fn for every challenge value, newest first.
func (q Queries) ScanChallenges(ctx context.Context, fn func(*Challenge) error) error {
	rows, err := q.db.NewSelect().Model((*Challenge)(nil)).Column("id", "hostname_id", "value", "created_at").
		OrderExpr("id DESC").Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var c Challenge
	for rows.Next() {
		if err := rows.Scan(&c.ID, &c.HostnameID, &c.Value, &c.CreatedAt); err != nil {
			return mapErr(err)
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// DeleteChallenge removes a value of a hostname; ErrNotFound if it holds
// no such value.
func (q Queries) DeleteChallenge(ctx context.Context, hostnameID, value string) error {
	res, err := q.db.NewDelete().Model((*Challenge)(nil)).
		Where("hostname_id = ? AND value = ?", hostnameID, value).Exec(ctx)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
