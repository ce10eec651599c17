package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A bucket of 3 an hour: 3 at once, the 4th refused until 20 minutes
// have passed, a refused or failed transaction charges nothing, and two
// actions in one transaction are charged together.
func TestBucket(t *testing.T) {
	b := ratelimit.Bucket{Kind: "create", Size: 3, Period: time.Hour, What: "creates"}
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storagetest.Open(t, d)
			ctx := context.Background()
			if _, err := st.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
				return tx.InsertAccount(ctx, &storage.Account{ID: "a", Name: "a", Plan: "free", CreatedAt: 1})
			}); err != nil {
				t.Fatal(err)
			}
			t0 := time.Unix(1_800_000_000, 0)
			charge := func(at time.Time, n int, fail error) error {
				_, err := st.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
					for range n {
						ratelimit.Charge(tx, "a", b, at)
					}
					return fail
				})
				return err
			}
			boom := errors.New("boom")
			steps := []struct {
				name  string
				at    time.Duration // after t0
				n     int
				fail  error
				retry time.Duration // 0: accepted
			}{
				{"a failed write charges nothing", 0, 3, boom, 0},
				{"two at once", 0, 2, nil, 0},
				{"the third", time.Second, 1, nil, 0},
				{"the fourth is refused", 2 * time.Second, 1, nil, 20*time.Minute - 2*time.Second},
				{"and charged nothing", 19 * time.Minute, 1, nil, time.Minute},
				{"one refills in 20 minutes", 20 * time.Minute, 1, nil, 0},
				{"but only one", 20 * time.Minute, 1, nil, 20 * time.Minute},
				{"an idle hour refills all", 2 * time.Hour, 3, nil, 0},
			}
			for _, s := range steps {
				err := charge(t0.Add(s.at), s.n, s.fail)
				switch e, _ := apierror.As(err); {
				case s.fail != nil:
					if !errors.Is(err, s.fail) {
						t.Errorf("%s: %v, want %v", s.name, err, s.fail)
					}
				case s.retry == 0 && err != nil:
					t.Errorf("%s: %v", s.name, err)
				case s.retry != 0 && (e == nil || e.Code != apierror.CodeRateLimited || e.RetryAfter != s.retry):
					t.Errorf("%s: %#v, want RATE_LIMITED after %v", s.name, e, s.retry)
				}
			}
		})
	}
}
