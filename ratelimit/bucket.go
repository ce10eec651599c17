package ratelimit

import (
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// Bucket is a token bucket of Size actions that refills over Period: Size
// actions may come at once, then one each Period/Size. Unlike a Limit it
// keeps one row per account and kind whatever the rate, and charging it
// costs a write no statement of its own (storage.Tx.ChargeLater).
type Bucket struct {
	Kind   string
	Size   int
	Period time.Duration
	What   string // for messages: "creates", "updates"
}

// Charge counts one action against b for the account; the transaction is
// refused, when its writes are done, with 429 RATE_LIMITED and Retry-After
// (the time until the bucket holds an action again) if b is empty. Any
// other refusal of the transaction takes the charge back with it.
func Charge(tx *storage.Tx, accountID string, b Bucket, now time.Time) {
	interval := max(b.Period.Milliseconds()/int64(max(b.Size, 1)), 1)
	at := now.UnixMilli()
	burst := interval * int64(max(b.Size, 1))
	tx.ChargeLater(accountID, b.Kind, at, interval, at+burst, func(over int64) error {
		return Refuse(apierror.RateLimited("more than %d %s %s for this account: one more is allowed every %s",
			b.Size, b.What, per(b.Period), time.Duration(interval)*time.Millisecond), time.Duration(over)*time.Millisecond)
	})
}

// per words a period for a message: "an hour", "a minute", "per 10m0s".
func per(d time.Duration) string {
	switch d {
	case time.Hour:
		return "an hour"
	case time.Minute:
		return "a minute"
	}
	return "per " + d.String()
}
