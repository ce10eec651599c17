// Package ratelimit holds the per-account limits that must hold across every
// node sharing the database: each counted action is a row in the store,
// counted over a sliding window inside the writing transaction (which holds
// the account's lock), never a counter in process memory.
package ratelimit

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// Limit is at most Max actions of Kind per Window.
type Limit struct {
	Kind   string
	Max    int
	Window time.Duration
	What   string // for messages: "registrations", "updates"
}

// The spec's [P2] limits.
var (
	Registrations = Limit{Kind: "register", Max: 30, Window: time.Minute, What: "registrations"}
	Updates       = Limit{Kind: "update", Max: 60, Window: time.Minute, What: "updates"}
)

// Take counts one action against l for the account at now, or answers 429
// RATE_LIMITED with Retry-After (the seconds until the oldest counted action
// leaves the window). It must run in the transaction that does the action,
// after the account row is locked.
func Take(ctx context.Context, tx *storage.Tx, accountID string, l Limit, now time.Time) error {
	n, wait, err := Count(ctx, tx, accountID, l, now)
	if err != nil {
		return err
	}
	if n >= l.Max {
		return Refuse(apierror.RateLimited("more than %d %s %s for this team; retry later", l.Max, l.What, per(l.Window)), wait)
	}
	return Add(ctx, tx, accountID, l, now)
}

// Count is Take's reading alone, for a rule that weighs several counts
// before it takes any: the actions of l counted for who at now, and how
// long until the oldest of them leaves the window.
func Count(ctx context.Context, tx *storage.Tx, who string, l Limit, now time.Time) (n int, wait time.Duration, err error) {
	n, oldest, err := tx.RateEvents(ctx, who, l.Kind, now.Add(-l.Window).UnixMilli())
	if err != nil || n == 0 {
		return n, 0, err
	}
	return n, time.UnixMilli(oldest).Add(l.Window).Sub(now), nil
}

// Add counts one action of l for who at now, as Take does once allowed.
func Add(ctx context.Context, tx *storage.Tx, who string, l Limit, now time.Time) error {
	return tx.AddRateEvent(ctx, &storage.RateEvent{AccountID: who, Kind: l.Kind, At: now.UnixMilli()})
}

// Refuse sets when p's caller may try again: after wait, and never "now"
// (a refusal on the window's edge still says a second).
func Refuse(p *apierror.Error, wait time.Duration) *apierror.Error {
	p.RetryAfter = max(wait, time.Second)
	return p
}
