package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// ACMEAccount reads the service's account at a CA.
func (q Queries) ACMEAccount(ctx context.Context, ca string) (*ACMEAccount, error) {
	a := new(ACMEAccount)
	err := q.db.NewSelect().Model(a).Where("ca = ?", ca).Scan(ctx)
	return a, mapErr(err)
}

// SaveACMEAccount stores an account unless one exists for the CA already.
func (q Queries) SaveACMEAccount(ctx context.Context, a *ACMEAccount) error {
	_, err := q.db.NewInsert().Model(a).On("CONFLICT (ca) DO NOTHING").Exec(ctx)
	return mapErr(err)
}

// Certificate reads a hostname's certificate.
func (q Queries) Certificate(ctx context.Context, hostnameID string) (*Certificate, error) {
	c := new(Certificate)
	err := q.db.NewSelect().Model(c).Where("hostname_id = ?", hostnameID).Scan(ctx)
	return c, mapErr(err)
}

// SaveCertificate inserts or overwrites a hostname's certificate row.
func (q Queries) SaveCertificate(ctx context.Context, c *Certificate) error {
	_, err := q.db.NewInsert().Model(c).On("CONFLICT (hostname_id) DO UPDATE").
		Set("status = EXCLUDED.status, ca = EXCLUDED.ca, csr = EXCLUDED.csr, chain = EXCLUDED.chain, " +
			"key_sealed = EXCLUDED.key_sealed, expires_at = EXCLUDED.expires_at, due_at = EXCLUDED.due_at, " +
			"error = EXCLUDED.error, lease_until = EXCLUDED.lease_until, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return mapErr(err)
}

// CertificatesDue lists up to limit certificates in one of statuses whose
// due time has come and that no node holds.
func (q Queries) CertificatesDue(ctx context.Context, now int64, limit int, statuses ...string) ([]Certificate, error) {
	cs := []Certificate{}
	err := q.db.NewSelect().Model(&cs).
		Where("status IN (?) AND due_at <= ? AND lease_until < ?", bun.In(statuses), now, now).
		OrderExpr("due_at").Limit(int64(limit)).Scan(ctx)
	return cs, mapErr(err)
}

// LeaseCertificate takes the lease of a certificate until until, if no node
// holds it and it is still as read (updated_at), showing status meanwhile;
// it reports whether it did.
func (q Queries) LeaseCertificate(ctx context.Context, hostnameID string, updatedAt, now, until int64, status string) (bool, error) {
	res, err := q.db.NewUpdate().Model((*Certificate)(nil)).
		Set("lease_until = ?, status = ?", until, status).
		Where("hostname_id = ? AND updated_at = ? AND lease_until < ?", hostnameID, updatedAt, now).Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// InsertHostnames inserts many hostnames at once (bulk loading).
func (q Queries) InsertHostnames(ctx context.Context, hs []Hostname) error {
	if len(hs) == 0 {
		return nil
	}
	_, err := q.db.NewInsert().Model(&hs).Exec(ctx)
	return mapErr(err)
}

// CertificateStats is what the certificates table holds, for monitoring.
type CertificateStats struct {
	ByStatus map[string]int
	Soonest  int64 // the earliest expiry of an issued certificate, Unix ms; 0 if none
	Expiring int   // issued certificates expiring before the soon given
}

// Certificates counts certificates by status and finds the issued ones
// expiring before soon (Unix ms).
func (q Queries) Certificates(ctx context.Context, soon int64) (CertificateStats, error) {
	st := CertificateStats{ByStatus: map[string]int{}}
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	if err := q.db.NewSelect().Model((*Certificate)(nil)).ColumnExpr("status, COUNT(*) AS n").Group("status").Scan(ctx, &rows); err != nil {
		return st, mapErr(err)
	}
	for _, r := range rows {
		st.ByStatus[r.Status] = r.N
	}
	err := q.db.NewSelect().Model((*Certificate)(nil)).
		ColumnExpr("COALESCE(MIN(expires_at), 0)").
		ColumnExpr("COUNT(CASE WHEN expires_at < ? THEN 1 END)", soon).
		Where("status = ? AND expires_at > 0", CertIssued).Scan(ctx, &st.Soonest, &st.Expiring)
	return st, mapErr(err)
}
