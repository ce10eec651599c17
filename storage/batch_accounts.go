package storage

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/lib/pq"
)

// A batch's accounts. On PostgreSQL every grouped write, in a batch or
// alone, locks the accounts it is keyed by first, in the order of their
// ids (lockFirst), and its parts read accounts under their lock as a write
// alone does (LockAccount, AccountAndPool, HostnameForMint): a batch's
// counts are exact by construction, whatever a rule checks against them.
// What differs is that a part's new hostnames wait for the batch's last
// statement (keepLater), one insert of many rows that moves each
// account's counter once: a part's read of an account counts those of the
// parts before it (pendingActive), as it would have seen them inserted.
// (Reading accounts without the lock, as parts once did, would save
// nothing: lockFirst holds it already. docs/performance.md has the story.)

// accountRefusal is a transaction's last statement refusing it for one
// account's sake: a rate limit its writes overdrew together. A batch so
// refused runs that account's writes alone, and the others again as a
// batch (group.go): one account at its limits does not make every other
// account's writes run alone.
type accountRefusal struct {
	account string
	err     error
}

func (e *accountRefusal) Error() string { return e.err.Error() }
func (e *accountRefusal) Unwrap() error { return e.err }

// inBatch reports whether the transaction runs a batch's parts on
// PostgreSQL, where its parts' new hostnames wait for its last statement.
func (q Queries) inBatch() bool { return q.tx != nil && q.tx.batch }

// pendingActive counts the active hostnames of the account that the
// transaction put off (a batch's creates, kept for its last statement).
func (t *Tx) pendingActive(accountID string) int {
	return activeIn(t.kept, accountID) + activeIn(t.later, accountID)
}

// activeIn counts the active hostnames of the account that ws insert.
func activeIn(ws []laterWrite, accountID string) int {
	n := 0
	for _, w := range ws {
		if h, ok := w.insert.(*Hostname); ok && h.AccountID == accountID && slices.Contains(ActiveStatuses, h.Status) {
			n++
		}
	}
	return n
}

// keepLater moves the hostnames (and the seen MACs, seen_macs.go) a
// batch's part put off to t.kept, for the batch's last statement, unless
// the part updates a row after inserting it (then they are written in
// their order, as before).
func (t *Tx) keepLater() {
	if !t.batch || updateAfterInsert(t.later) {
		return
	}
	rest := t.later[:0:0]
	for _, w := range t.later {
		switch w.insert.(type) {
		case *Hostname, *SeenMAC:
			t.kept = append(t.kept, w)
		default:
			rest = append(rest, w)
		}
	}
	t.later = rest
}

// lockFirst locks the accounts keys name (a key that is no account's id
// locks nothing), in the order of their ids, before anything else the
// transaction does: the statement is kept to go with its next one, so it
// costs no round trip. Every grouped write on PostgreSQL does so, in a
// batch or alone: the accounts' rows are then always taken before the
// rows under them (hostnames, buckets) and in one order, so that two
// transactions, on this node or on others, do not take them in opposite
// orders and deadlock (which PostgreSQL breaks only after its
// deadlock_timeout, a second of waiting for every write of the batch).
func (t *Tx) lockFirst(ctx context.Context, keys []string) error {
	if t.dialect != Postgres {
		return nil
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		// No account id has a $ (which could end the block's quoting), a
		// NUL or a byte that is not UTF-8 (which PostgreSQL refuses): a
		// key with one, from a caller's header, is no account's.
		if utf8.ValidString(k) && !strings.ContainsAny(k, "$\x00") {
			ids = append(ids, k)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil
	}
	// A DO block returns no rows, so the statement it goes with keeps its
	// own first result.
	list := t.tx.NewRaw("?::text[]", pq.Array(ids)).String()
	stmt := "DO $hostmint$ BEGIN PERFORM 1 FROM accounts WHERE id = ANY(" + list + ") ORDER BY id FOR UPDATE; END $hostmint$"
	if _, err := t.tx.ExecContext(t.withNextCtx(ctx), pgwire.WithNext(stmt)); err != nil {
		return err
	}
	return nil
}
