package accounts_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A sign-in link is good for one session even when several redemptions race
// (two nodes handed the same link at once), and a session ends on sign-out.
func TestSigninLinkOnce(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, _, svc, a := newAccount(t, d)
			token, _, err := svc.CreateSigninLink(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			var won atomic.Int32
			var secret atomic.Value
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					s, sess, err := svc.RedeemSigninLink(ctx, token)
					if err == nil && sess.AccountID == a.ID {
						won.Add(1)
						secret.Store(s)
					} else if code(err) != "UNAUTHORIZED" {
						t.Errorf("redeem: %v", err)
					}
				})
			}
			wg.Wait()
			if won.Load() != 1 {
				t.Fatalf("%d sessions from one link", won.Load())
			}
			s := secret.Load().(string)
			if sess, err := svc.Session(ctx, s); err != nil || sess.AccountID != a.ID || sess.Operator() {
				t.Fatalf("session: %+v %v", sess, err)
			}
			if err := svc.EndSession(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Session(ctx, s); !errors.Is(err, accounts.ErrNoSession) {
				t.Fatalf("after sign-out: %v", err)
			}
			if _, _, err := svc.CreateSigninLink(ctx, "acc_none"); code(err) != "NOT_FOUND" {
				t.Fatalf("link for no account: %v", err)
			}
		})
	}
}
