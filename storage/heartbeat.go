package storage

import (
	"context"
	"time"
)

// The heartbeat is one row every writer node stamps with its clock each
// second. A read-only node reads it with the changes: once it has applied
// every change its database holds, it is current up to the stamp it read,
// whatever the standby's replay delay. A standby cut off from its primary,
// or a database no writer runs on, shows an old stamp; an idle one does not.

// Beat stamps the heartbeat with now.
func (s *Store) Beat(ctx context.Context, now time.Time) error {
	if s.readOnly {
		return ErrReadOnly
	}
	_, err := s.db.NewRaw("INSERT INTO heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at",
		now.UnixMilli()).Exec(ctx)
	return mapErr(err)
}

// Position is where a database is: its newest change id and its
// heartbeat (Unix ms; 0 when no writer has stamped it yet).
func (q Queries) Position(ctx context.Context) (last, beat int64, err error) {
	err = q.db.NewRaw("SELECT (SELECT COALESCE(MAX(id), 0) FROM changes), (SELECT COALESCE(MAX(at), 0) FROM heartbeat)").
		Scan(ctx, &last, &beat)
	return last, beat, mapErr(err)
}
