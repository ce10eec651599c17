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

// releaseChunk is how many hostnames one round of ReleaseHostnames takes:
// each of its statements stays well inside pgwire.StallTimeout however
// large the account, and the rounds share the one transaction.
const releaseChunk = 5000

// ReleaseHostnames stops serving the hostnames of set and retires their
// labels for their account: their certificates revoked, their records,
// DNS-01 credentials and challenge values deleted, each recorded in the
// change feed. It is set-based, a handful of statements for each
// releaseChunk hostnames, so an account of a million is hundreds of
// statements, not millions. It returns how many it released.
func (t *Tx) ReleaseHostnames(ctx context.Context, set HostnameSet, now int64) (int, error) {
	q := t.Queries
	if set.AccountID != "" && q.dialect == Postgres {
		// The counter's row trigger is off for this transaction, and the
		// account is counted again once at the end (migration 29).
		if _, err := q.db.ExecContext(ctx, "SELECT set_config('hostmint.recount', 'on', true)"); err != nil {
			return 0, mapErr(err)
		}
		defer q.db.ExecContext(ctx, "SELECT set_config('hostmint.recount', 'off', true)")
	}
	total, err := t.releaseRounds(ctx, set, now)
	if err != nil || set.AccountID == "" || q.dialect != Postgres {
		return total, err
	}
	_, err = q.db.NewRaw("UPDATE accounts SET active_hostnames = (SELECT COUNT(*) FROM hostnames "+
		"WHERE account_id = ? AND status IN (?)) WHERE id = ?", set.AccountID, bun.In(ActiveStatuses), set.AccountID).Exec(ctx)
	return total, mapErr(err)
}

// releaseRounds releases set's hostnames releaseChunk at a time.
func (t *Tx) releaseRounds(ctx context.Context, set HostnameSet, now int64) (int, error) {
	q := t.Queries
	total := 0
	for {
		var ids []string
		if err := set.where(q.db.NewSelect().TableExpr("hostnames").Column("id")).
			OrderExpr("id").Limit(releaseChunk).Scan(ctx, &ids); err != nil {
			return total, mapErr(err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		if err := t.release(ctx, ids, now); err != nil {
			return total, err
		}
		total += len(ids)
		if len(ids) < releaseChunk {
			return total, nil
		}
	}
}

// release is ReleaseHostnames for one round's ids.
func (t *Tx) release(ctx context.Context, ids []string, now int64) error {
	q, in := t.Queries, bun.In(ids)
	if err := q.revokeCertificates(ctx, in, now); err != nil {
		return err
	}
	if _, err := q.db.NewRaw("INSERT INTO retired_labels (domain_id, label, account_id, retired_at) "+
		"SELECT domain_id, label, account_id, ? FROM hostnames WHERE id IN (?) ON CONFLICT (domain_id, label) DO NOTHING", now, in).Exec(ctx); err != nil {
		return mapErr(err)
	}
	for _, m := range []any{(*Record)(nil), (*Credential)(nil), (*Challenge)(nil)} {
		if _, err := q.db.NewDelete().Model(m).Where("hostname_id IN (?)", in).Exec(ctx); err != nil {
			return mapErr(err)
		}
	}
	if len(ids) == 1 {
		// The write's own change, whose id its caller may wait for.
		if err := t.Changed(ctx, KindHostname, ids[0]); err != nil {
			return err
		}
	} else {
		// Written here rather than kept for the commit: an account's
		// hostnames may be a million rows, the commit's insert one statement.
		if _, err := q.db.NewRaw("INSERT INTO changes (kind, ref, created_at) SELECT ?, id, ? FROM hostnames WHERE id IN (?)",
			KindHostname, now, in).Exec(ctx); err != nil {
			return mapErr(err)
		}
	}
	_, err := q.db.NewUpdate().TableExpr("hostnames").
		Set("status = ?, released_at = ?, updated_at = ?", StatusReleased, now, now).
		Where("id IN (?)", in).Exec(ctx)
	return mapErr(err)
}

// RevokeCertificate revokes a hostname's certificate, if it has one: a held
// chain is revoked at its CA (revoking), one never issued is done (revoked);
// a managed private key is dropped either way.
func (q Queries) RevokeCertificate(ctx context.Context, hostnameID string, now int64) error {
	return q.revokeCertificates(ctx, bun.In([]string{hostnameID}), now)
}

func (q Queries) revokeCertificates(ctx context.Context, ids any, now int64) error {
	_, err := q.db.NewUpdate().Model((*Certificate)(nil)).
		Set("status = CASE WHEN chain <> '' THEN ? ELSE ? END", CertRevoking, CertRevoked).
		Set("key_sealed = '', due_at = 0, lease_until = 0, updated_at = ?", now).
		Where("hostname_id IN (?)", ids).Exec(ctx)
	return mapErr(err)
}
