package storage

import (
	"fmt"

	"github.com/uptrace/bun"
)

// A charge is one or more actions counted against an account's token
// bucket of a kind (see ChargeLater).
type charge struct {
	accountID, kind string
	now, cost       int64 // Unix ms; ms of the bucket's refill per action, times the actions
	check           func(tat int64) error
	tat             int64 // the bucket's time once charged, read back by flush
}

// ChargeLater counts an action against the account's bucket of kind at the
// end of the transaction, with its other writes: on PostgreSQL in the same
// statement, so a limit costs a write no round trip, and the bucket's row
// is locked only from then until the commit. A bucket is kept as the one
// time GCRA needs (its "theoretical arrival time"): each action moves it
// to max(it, now) + interval, and check, given the moved time, refuses the
// transaction (it rolls back, the charge with it) when the bucket is
// overdrawn. Actions of one account and kind in a transaction are charged
// together, checked by the first check given.
func (t *Tx) ChargeLater(accountID, kind string, now, interval int64, check func(tat int64) error) {
	for i := range t.charges {
		if c := &t.charges[i]; c.accountID == accountID && c.kind == kind {
			c.cost += interval
			return
		}
	}
	t.charges = append(t.charges, charge{accountID: accountID, kind: kind, now: now, cost: interval, check: check})
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

// checkCharges hands each charged bucket's new time to its check.
func (t *Tx) checkCharges() error {
	for _, c := range t.charges {
		if err := c.check(c.tat); err != nil {
			return err
		}
	}
	t.charges = nil
	return nil
}
