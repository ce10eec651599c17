package storage

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"
)

// InsertRegistration inserts r.
func (q Queries) InsertRegistration(ctx context.Context, r *Registration) error {
	_, err := q.db.NewInsert().Model(r).Exec(ctx)
	if err == nil {
		q.made("acme-registration", r.ID)
	}
	return mapErr(err)
}

// Registration reads one registration by username.
func (q Queries) Registration(ctx context.Context, username string) (*Registration, error) {
	r := new(Registration)
	err := q.db.NewSelect().Model(r).Where("id = ?", username).Scan(ctx)
	return r, mapErr(err)
}

// LockRegistration is Registration, the row locked until the transaction
// ends on PostgreSQL (SQLite's write transactions exclude each other
// already): a registration's updates are counted one at a time.
func (q Queries) LockRegistration(ctx context.Context, username string) (*Registration, error) {
	if q.dialect != Postgres {
		return q.Registration(ctx, username)
	}
	r := new(Registration)
	err := q.db.NewSelect().Model(r).Where("id = ?", username).For("UPDATE").Scan(ctx)
	return r, mapErr(err)
}

// LockName takes a lock on name until the transaction ends on PostgreSQL
// (a transaction-scoped advisory lock; SQLite's write transactions exclude
// each other already): what is counted under a key no row holds (a source
// network's registrations) is counted one writer at a time.
func (q Queries) LockName(ctx context.Context, name string) error {
	if q.dialect != Postgres {
		return nil
	}
	_, err := q.db.NewRaw("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", name).Exec(ctx)
	return mapErr(err)
}

// PublishRegistration makes value the registration's newest value, the
// newest before it the other one (a value sent again, a client's retry,
// keeps the other), and marks it used at now. One statement: concurrent
// updates of one registration take turns on its row, each seeing the
// last one's values.
func (q Queries) PublishRegistration(ctx context.Context, id, value string, now int64) error {
	res, err := q.db.NewUpdate().Model((*Registration)(nil)).
		Set("txt_old = CASE WHEN txt_new = ? THEN txt_old ELSE txt_new END", value).
		Set("txt_new = ?", value).Set("txt_at = ?", now).Set("used_at = ?", now).
		Where("id = ?", id).Exec(ctx)
	return oneRow(res, err)
}

// DeleteRegistration deletes a registration; ErrNotFound if there is none.
func (q Queries) DeleteRegistration(ctx context.Context, id string) error {
	res, err := q.db.NewDelete().Model((*Registration)(nil)).Where("id = ?", id).Exec(ctx)
	return oneRow(res, err)
}

// Registrations lists up to limit registrations in username order after
// after ("" from the first), the newest values left out.
func (q Queries) Registrations(ctx context.Context, after string, limit int) ([]Registration, error) {
	rs := []Registration{}
	err := q.db.NewSelect().Model(&rs).ExcludeColumn("password_hash").
		Where("id > ?", after).OrderExpr("id").Limit(int64(limit)).Scan(ctx)
	return rs, mapErr(err)
}

// RegistrationsByID reads the registrations of ids that exist.
func (q Queries) RegistrationsByID(ctx context.Context, ids []string) ([]Registration, error) {
	rs := []Registration{}
	if len(ids) == 0 {
		return rs, nil
	}
	err := q.db.NewSelect().Model(&rs).Column("id", "name", "txt_new", "txt_old", "txt_at").
		Where("id IN (?)", bun.In(ids)).Scan(ctx)
	return rs, mapErr(err)
}

// ScanServedRegistrations calls fn for every registration whose newest
// value was written at or after since, through the index of served ones.
func (q Queries) ScanServedRegistrations(ctx context.Context, since int64, fn func(*Registration) error) error {
	rows, err := q.db.NewSelect().Model((*Registration)(nil)).Column("id", "name", "txt_new", "txt_old", "txt_at").
		Where("txt_at > 0 AND txt_at >= ?", since).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var r Registration
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.Name, &r.TXTNew, &r.TXTOld, &r.TXTAt); err != nil {
			return mapErr(err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// PurgeUnusedRegistrations deletes the registrations last used before
// cutoff (Unix ms), through the index on used_at, and returns how many.
// Their values stopped being served long before, so no change is due.
func (s *Store) PurgeUnusedRegistrations(ctx context.Context, cutoff int64) (int64, error) {
	return s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
		old := tx.tx.NewSelect().Model((*Registration)(nil)).Column("id").Where("used_at < ?", cutoff).Limit(purgeBatch)
		return tx.tx.NewDelete().Model((*Registration)(nil)).Where("id IN (?)", old).Exec(ctx)
	})
}

func oneRow(res sql.Result, err error) error {
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// ImportRegistrations inserts rs (another server's registrations) in one
// transaction; those whose username or subdomain is held already are
// skipped. Those with values to serve are announced to the feed.
func (s *Store) ImportRegistrations(ctx context.Context, rs []Registration) (imported int, err error) {
	_, err = s.Write(ctx, func(ctx context.Context, tx *Tx) error {
		imported = 0
		for i := range rs {
			res, err := tx.tx.NewInsert().Model(&rs[i]).On("CONFLICT DO NOTHING").Exec(ctx)
			if err != nil {
				return mapErr(err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			imported++
			if rs[i].TXTAt > 0 {
				if err := tx.Changed(ctx, KindRegistration, rs[i].ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return imported, err
}

// SetRegistrationPassword replaces a registration's password hash old
// with hash; ErrNotFound if it no longer holds old.
func (q Queries) SetRegistrationPassword(ctx context.Context, id, old, hash string) error {
	res, err := q.db.NewUpdate().Model((*Registration)(nil)).Set("password_hash = ?", hash).
		Where("id = ? AND password_hash = ?", id, old).Exec(ctx)
	return oneRow(res, err)
}
