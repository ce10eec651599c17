package accounts_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A team closed by suspension or by its plan's end: its key (even cached),
// sessions and links stop at that moment; a suspension deletes them at
// once, a plan's end at the next sweep; opening the team again lets its
// keys back in, but not the sessions and links that were ended.
func TestClosedTeam(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, auth, svc, a := newAccount(t, d)
			var clock atomic.Int64
			clock.Store(time.Now().UnixMilli())
			now := func() time.Time { return time.UnixMilli(clock.Load()) }
			accounts.SetClock(svc, auth, now)
			k, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{})
			if err != nil {
				t.Fatal(err)
			}
			bearer := k.Token
			open := func(what string) (secret, link string) {
				t.Helper()
				if _, err := auth.Authenticate(ctx, bearer); err != nil {
					t.Fatalf("%s: key: %v", what, err)
				}
				token, _, err := svc.CreateSigninLink(ctx, a.ID)
				if err != nil {
					t.Fatalf("%s: link: %v", what, err)
				}
				if secret, _, err = svc.RedeemSigninLink(ctx, token); err != nil {
					t.Fatalf("%s: redeem: %v", what, err)
				}
				link, _, err = svc.CreateSigninLink(ctx, a.ID)
				if err != nil {
					t.Fatal(err)
				}
				return secret, link
			}
			closed := func(what, state string, secret, link string) {
				t.Helper()
				_, err := auth.Authenticate(ctx, bearer)
				if code(err) != "FORBIDDEN" || !strings.Contains(err.Error(), state) {
					t.Errorf("%s: key = %v, want FORBIDDEN naming %q", what, err, state)
				}
				if _, err := svc.Session(ctx, secret); !errors.Is(err, accounts.ErrNoSession) {
					t.Errorf("%s: session = %v, want ended", what, err)
				}
				if _, _, err := svc.RedeemSigninLink(ctx, link); code(err) != "UNAUTHORIZED" {
					t.Errorf("%s: unused link = %v, want UNAUTHORIZED", what, err)
				}
				if _, _, err := svc.CreateSigninLink(ctx, a.ID); code(err) != "CONFLICT" {
					t.Errorf("%s: new link = %v, want CONFLICT", what, err)
				}
				if acc, _ := svc.TeamAccess(ctx, a.ID); len(acc.Sessions)+len(acc.SigninLinks) != 0 {
					t.Errorf("%s: TeamAccess lists %+v, want nothing", what, acc)
				}
			}
			held := func() int {
				ss, ls, err := store.Reader().TeamAccess(ctx, a.ID, clock.Load())
				if err != nil {
					t.Fatal(err)
				}
				return len(ss) + len(ls)
			}

			// Suspension: rows gone in the same write, the cached key refused.
			secret, link := open("before suspension")
			suspended := storage.AccountSuspended
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{Status: &suspended}); err != nil {
				t.Fatal(err)
			}
			if n := held(); n != 0 {
				t.Errorf("after suspension %d sessions and links are left", n)
			}
			closed("suspended", "suspended", secret, link)
			active := storage.AccountActive
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{Status: &active}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Session(ctx, secret); !errors.Is(err, accounts.ErrNoSession) {
				t.Errorf("restored: the ended session came back: %v", err)
			}

			// Plan end: refused from its moment, deleted by the next sweep.
			end := now().Add(time.Hour)
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{PlanEnd: &end}); err != nil {
				t.Fatal(err)
			}
			secret, link = open("before the plan ends")
			since := clock.Load() - 1
			if err := svc.SweepPlanEnds(ctx, &since); err != nil || held() != 2 || since != clock.Load() {
				t.Fatalf("a sweep before the plan's end left %d rows (%v) and moved to %d, want 2 and %d", held(), err, since, clock.Load())
			}
			clock.Add(time.Hour.Milliseconds())
			closed("plan ended", "ended", secret, link)
			if held() != 2 {
				t.Fatalf("before the sweep: %d rows, want 2", held())
			}
			if err := svc.SweepPlanEnds(ctx, &since); err != nil || held() != 0 {
				t.Errorf("after the sweep: %d rows (%v), want 0", held(), err)
			}
			never := time.Time{}
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{PlanEnd: &never}); err != nil {
				t.Fatal(err)
			}
			open("plan extended")

			// Bad input changes nothing.
			for _, bad := range []string{"ended", "closed", ""} {
				if _, err := svc.Patch(ctx, a.ID, accounts.Input{Status: &bad, PlanEnd: &end}); code(err) != "BAD_REQUEST" {
					t.Errorf("status %q: %v, want BAD_REQUEST", bad, err)
				}
			}
			if got, _ := svc.Get(ctx, a.ID); got.PlanEndsAt != 0 || got.SuspendedAt != 0 {
				t.Errorf("a refused patch changed the account: %+v", got)
			}
		})
	}
}
