package storage

import (
	"errors"
	"fmt"

	"github.com/lib/pq"
	"github.com/uptrace/bun"
)

// A charge is one or more actions counted against an account's token
// bucket of a kind (see ChargeLater).
type charge struct {
	accountID, kind string
	now, cost       int64 // Unix ms; ms of the bucket's refill per action, times the actions
	limit           int64 // the latest the bucket's time may move to (Unix ms)
	refuse          func(over int64) error
	tat             int64 // the bucket's time once charged, read back by flush
}

// ChargeLater counts an action against the account's bucket of kind at the
// end of the transaction, with its other writes: on PostgreSQL in the same
// statement, so a limit costs a write no round trip, and the bucket's row
// is locked only from then until the commit. A bucket is kept as the one
// time GCRA needs (its "theoretical arrival time"): each action moves it
// to max(it, now) + interval. When that passes limit the bucket is
// overdrawn: the transaction is refused with refuse's error, given by how
// many ms, and rolls back, the charge with it. On PostgreSQL that check
// runs in the statement too (hostmint_overdrawn), so that the statement
// can carry the COMMIT (storage/pgwire). Actions of one account and kind in a
// transaction are charged together, against the first limit given.
func (t *Tx) ChargeLater(accountID, kind string, now, interval, limit int64, refuse func(over int64) error) {
	for i := range t.charges {
		if c := &t.charges[i]; c.accountID == accountID && c.kind == kind {
			c.cost += interval
			return
		}
	}
	t.charges = append(t.charges, charge{accountID: accountID, kind: kind, now: now, cost: interval, limit: limit, refuse: refuse})
}

// chargeQuery is the upsert that moves one bucket and returns its time.
func (t *Tx) chargeQuery(c *charge) *bun.RawQuery {
	greatest := "MAX" // SQLite's scalar max
	if t.dialect == Postgres {
		greatest = "GREATEST"
	}
	return t.tx.NewRaw(fmt.Sprintf(`INSERT INTO rate_buckets (account_id, kind, tat) VALUES (?, ?, ?)
ON CONFLICT (account_id, kind) DO UPDATE SET tat = %s(rate_buckets.tat + ?, excluded.tat) RETURNING tat`, greatest),
		c.accountID, c.kind, c.now+c.cost, c.cost)
}

// checkCharges refuses the transaction if a charged bucket is overdrawn.
func (t *Tx) checkCharges() error {
	for _, c := range t.charges {
		if c.tat > c.limit {
			return &accountRefusal{account: c.accountID, err: c.refuse(c.tat - c.limit)}
		}
	}
	t.charges = nil
	return nil
}

// chargeColumn is charge i's column of the flush statement (flush.go),
// which reads its bucket's time from the statement's part w: the time, or
// the error that refuses the transaction when it is past the limit.
func (t *Tx) chargeColumn(i int, w string) string {
	return fmt.Sprintf("(SELECT CASE WHEN tat > %d THEN hostmint_overdrawn(%d, tat - %d) ELSE tat END FROM %s)",
		t.charges[i].limit, i, t.charges[i].limit, w)
}

// overdrawnCode is the SQLSTATE hostmint_overdrawn raises (migration 22).
const overdrawnCode = "HM429"

// overdrawn is err, or, if it is hostmint_overdrawn's, the refusal of the
// charge it names.
func (t *Tx) overdrawn(err error) error {
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != overdrawnCode {
		return err
	}
	var (
		i    int
		over int64
	)
	if _, serr := fmt.Sscanf(pe.Detail, "%d %d", &i, &over); serr != nil || i < 0 || i >= len(t.charges) {
		return err
	}
	return &accountRefusal{account: t.charges[i].accountID, err: t.charges[i].refuse(over)}
}
