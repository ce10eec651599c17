package storage

import (
	"context"
	"errors"
	"strings"

	"github.com/lib/pq"
	"github.com/uptrace/bun"
)

// Signed DNS UPDATE messages are not applied twice: the door (dnsupdate)
// records every verified message's MAC, and a message whose MAC is
// recorded already is a replay. The table is every node's on the store,
// and its primary key decides between two nodes (or two callers of one)
// that record the same MAC at once: one commits, the other fails on the
// key (ErrSeenMAC) or finds the row there (RecordMAC), on PostgreSQL after
// waiting for the first one's commit. A row is needed only while a server
// would still take its message (the TSIG time window), and is purged after.

// SeenMAC is the MAC of one signed message, hashed with its key's name.
type SeenMAC struct {
	bun.BaseModel `bun:"table:seen_macs"`

	Digest    string `bun:"digest,pk"`  // hex SHA-256 of "<key name>|<MAC in hex>"
	ExpiresAt int64  `bun:"expires_at"` // no server takes the message after it (Unix ms)
}

// ErrSeenMAC is a write's error when it recorded a MAC (RecordMACLater)
// that was recorded already: nothing of the write was committed.
var ErrSeenMAC = errors.New("storage: this signed message's MAC was recorded already")

// RecordMACLater queues m's insert for the end of the transaction, as
// InsertLater does (with the change rows, the audit entry and the COMMIT:
// on PostgreSQL no round trip of its own), but names no object for the
// audit entry. A MAC recorded already fails the write with ErrSeenMAC.
// A batch's parts (WriteGrouped) keep theirs for its last statement: the
// reads made ahead for the parts after (prefetch.go) stay good, as no
// read is of this table.
func (t *Tx) RecordMACLater(m *SeenMAC) {
	t.later = append(t.later, laterWrite{insert: m})
}

// RecordMAC records m alone, in one statement of its own, for a message
// whose transaction committed nothing: false when it was recorded
// already (the message is a replay).
func (s *Store) RecordMAC(ctx context.Context, m *SeenMAC) (bool, error) {
	if s.readOnly {
		return false, ErrReadOnly
	}
	release, err := s.gate.enter(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	res, err := s.db.NewInsert().Model(m).On("CONFLICT (digest) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// PurgeSeenMACs deletes the MACs whose messages expired before now (Unix
// ms), about purgeBatch a transaction found through the index on
// expires_at, and returns how many it deleted.
func (s *Store) PurgeSeenMACs(ctx context.Context, now int64) (int64, error) {
	return s.purgeBefore(ctx, (*SeenMAC)(nil), "expires_at", now)
}

// isSeenMAC reports whether err is the seen_macs key refusing a MAC.
func isSeenMAC(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505" && pqErr.Table == "seen_macs"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed: seen_macs.")
}

// seenMACRows are the SeenMAC rows among ws, and the rest.
func seenMACRows(ws []laterWrite) (macs []*SeenMAC, rest []laterWrite) {
	for _, w := range ws {
		if m, ok := w.insert.(*SeenMAC); ok {
			macs = append(macs, m)
		} else {
			rest = append(rest, w)
		}
	}
	return macs, rest
}
