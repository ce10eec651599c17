package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// HostnameSet names the hostnames a release takes: one by ID, or every one
// of an account. Released and terminated ones are never in it: both are
// final, and a terminated label stays taken.
type HostnameSet struct {
	ID, AccountID string
}

func (hs HostnameSet) where(sel *bun.SelectQuery) *bun.SelectQuery {
	if hs.ID != "" {
		sel = sel.Where("id = ?", hs.ID)
	} else {
		sel = sel.Where("account_id = ?", hs.AccountID)
	}
	return sel.Where("status NOT IN (?)", bun.In([]string{StatusReleased, StatusTerminated}))
}

func (hs HostnameSet) ids(q Queries) *bun.SelectQuery {
	return hs.where(q.db.NewSelect().TableExpr("hostnames").Column("id"))
}

// ReleaseHostnames stops serving the hostnames of set and retires their
// labels for their account: their certificates revoked, their records,
// DNS-01 credentials and challenge values deleted, each recorded in the
// change feed. It is set-based, so an account of a million hostnames is a
// handful of statements, not millions. It returns how many it released.
func (t *Tx) ReleaseHostnames(ctx context.Context, set HostnameSet, now int64) (int, error) {
	q := t.Queries
	ids := set.ids(q)
	if err := q.revokeCertificates(ctx, ids, now); err != nil {
		return 0, err
	}
	retire := set.where(q.db.NewSelect().TableExpr("hostnames").
		ColumnExpr("domain_id, label, account_id, ? AS retired_at", now))
	if _, err := q.db.NewRaw("INSERT INTO retired_labels (domain_id, label, account_id, retired_at) ? ON CONFLICT (domain_id, label) DO NOTHING", retire).Exec(ctx); err != nil {
		return 0, mapErr(err)
	}
	for _, m := range []any{(*Record)(nil), (*Credential)(nil), (*Challenge)(nil)} {
		if _, err := q.db.NewDelete().Model(m).Where("hostname_id IN (?)", ids).Exec(ctx); err != nil {
			return 0, mapErr(err)
		}
	}
	if set.ID != "" {
		// One row: the write's own change, whose id its caller may wait for.
		if err := t.Changed(ctx, KindHostname, set.ID); err != nil {
			return 0, err
		}
	} else {
		feed := set.where(q.db.NewSelect().TableExpr("hostnames").
			ColumnExpr("?, id, ?", KindHostname, now))
		if _, err := q.db.NewRaw("INSERT INTO changes (kind, ref, created_at) ?", feed).Exec(ctx); err != nil {
			return 0, mapErr(err)
		}
	}
	upd := q.db.NewUpdate().TableExpr("hostnames").
		Set("status = ?, released_at = ?, updated_at = ?", StatusReleased, now, now)
	if set.ID != "" {
		upd = upd.Where("id = ?", set.ID)
	} else {
		upd = upd.Where("account_id = ?", set.AccountID)
	}
	res, err := upd.Where("status NOT IN (?)", bun.In([]string{StatusReleased, StatusTerminated})).Exec(ctx)
	if err != nil {
		return 0, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RevokeCertificate revokes a hostname's certificate, if it has one: a held
// chain is revoked at its CA (revoking), one never issued is done (revoked);
// a managed private key is dropped either way.
func (q Queries) RevokeCertificate(ctx context.Context, hostnameID string, now int64) error {
	return q.revokeCertificates(ctx, q.db.NewSelect().TableExpr("hostnames").Column("id").Where("id = ?", hostnameID), now)
}

func (q Queries) revokeCertificates(ctx context.Context, ids *bun.SelectQuery, now int64) error {
	_, err := q.db.NewUpdate().Model((*Certificate)(nil)).
		Set("status = CASE WHEN chain <> '' THEN ? ELSE ? END", CertRevoking, CertRevoked).
		Set("key_sealed = '', due_at = 0, lease_until = 0, updated_at = ?", now).
		Where("hostname_id IN (?)", ids).Exec(ctx)
	return mapErr(err)
}
