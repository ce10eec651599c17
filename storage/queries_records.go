package storage

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"
)

// InsertRecord inserts r.
func (q Queries) InsertRecord(ctx context.Context, r *Record) error {
	_, err := q.db.NewInsert().Model(r).Exec(ctx)
	if err == nil {
		q.made("record", r.ID)
	}
	return mapErr(err)
}

// Record reads one record by id.
func (q Queries) Record(ctx context.Context, id string) (*Record, error) {
	r := new(Record)
	err := q.db.NewSelect().Model(r).Where("id = ?", id).Scan(ctx)
	return r, mapErr(err)
}

// UpdateRecord writes every column of r.
func (q Queries) UpdateRecord(ctx context.Context, r *Record) error {
	_, err := q.db.NewUpdate().Model(r).WherePK().Exec(ctx)
	return mapErr(err)
}

// DeleteRecord deletes one record.
func (q Queries) DeleteRecord(ctx context.Context, id string) error {
	_, err := q.db.NewDelete().Model((*Record)(nil)).Where("id = ?", id).Exec(ctx)
	return mapErr(err)
}

// Records lists the records of hostnames, oldest first.
func (q Queries) Records(ctx context.Context, hostnameIDs ...string) ([]Record, error) {
	rs := []Record{}
	if len(hostnameIDs) == 0 {
		return rs, nil
	}
	err := q.records(&rs, hostnameIDs).Scan(ctx)
	return rs, mapErr(err)
}

// records is Records' read, into rs.
func (q Queries) records(rs *[]Record, hostnameIDs []string) *bun.SelectQuery {
	return q.db.NewSelect().Model(rs).Where("hostname_id IN (?)", bun.In(hostnameIDs)).OrderExpr("created_at, id")
}

// ScanRecords calls fn for every record of a hostname DNS may serve.
func (q Queries) ScanRecords(ctx context.Context, fn func(*Record) error) error {
	rows, err := q.db.NewSelect().Model((*Record)(nil)).
		Column("record.id", "record.hostname_id", "record.name", "record.type", "record.data").
		Join("JOIN hostnames AS h ON h.id = record.hostname_id").
		Where("h.status IN (?)", bun.In(ActiveStatuses)).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var r Record
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.HostnameID, &r.Name, &r.Type, &r.Data); err != nil {
			return mapErr(err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// PurgeReleased deletes the hostnames released before cutoff (Unix ms),
// with the certificate rows of theirs that are done (revoked, or never
// issued), through the index of released hostnames; one whose certificate
// is still being revoked stays until it is. Their retired labels stay:
// a label is never handed out again. It returns how many it deleted.
func (s *Store) PurgeReleased(ctx context.Context, cutoff int64) (int64, error) {
	return s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
		var ids []string
		err := tx.tx.NewSelect().Model((*Hostname)(nil)).Column("id").
			Where("status = ? AND released_at < ?", StatusReleased, cutoff).
			Where("NOT EXISTS (SELECT 1 FROM certificates AS c WHERE c.hostname_id = hostname.id AND c.status = ?)", CertRevoking).
			OrderExpr("released_at").Limit(purgeBatch).Scan(ctx, &ids)
		if err != nil || len(ids) == 0 {
			return emptyResult{}, err
		}
		if _, err := tx.tx.NewDelete().Model((*Certificate)(nil)).Where("hostname_id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
			return nil, err
		}
		return tx.tx.NewDelete().Model((*Hostname)(nil)).Where("id IN (?)", bun.In(ids)).Exec(ctx)
	})
}

// emptyResult is the result of a statement that deleted nothing.
type emptyResult struct{}

func (emptyResult) LastInsertId() (int64, error) { return 0, nil }
func (emptyResult) RowsAffected() (int64, error) { return 0, nil }
