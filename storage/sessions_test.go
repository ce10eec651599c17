package storage_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// TestTeamAccess holds the SQL rule of an open account (sessions, sign-in
// links, the sweep) to Account.Access, case by case, on both stores.
func TestTeamAccess(t *testing.T) {
	const now = 1_000_000
	tests := []struct {
		id                 string
		suspended, planEnd int64
		want               string
	}{
		{"open", 0, 0, storage.AccountActive},
		{"ends-later", 0, now + 1, storage.AccountActive},
		{"ended", 0, now - 1, storage.AccountEnded},
		{"ends-now", 0, now, storage.AccountEnded},
		{"suspended", 5, 0, storage.AccountSuspended},
		{"suspended-ends-later", 5, now + 1, storage.AccountSuspended},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx, q := t.Context(), s.Reader()
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for _, tc := range tests {
				a := &storage.Account{ID: tc.id, Name: tc.id, Plan: "free", SuspendedAt: tc.suspended, PlanEndsAt: tc.planEnd, CreatedAt: 1}
				if err := tx.InsertAccount(ctx, a); err != nil {
					return err
				}
				for _, sfx := range []string{"-a", "-b"} {
					if err := tx.InsertSession(ctx, &storage.Session{ID: "s-" + tc.id + sfx, AccountID: tc.id, ExpiresAt: now + 100, CreatedAt: 1}); err != nil {
						return err
					}
					if err := tx.InsertSigninLink(ctx, &storage.SigninLink{ID: "l-" + tc.id + sfx, AccountID: tc.id, ExpiresAt: now + 100, CreatedAt: 1}); err != nil {
						return err
					}
				}
			}
			return tx.InsertSession(ctx, &storage.Session{ID: "s-operator", ExpiresAt: now + 100, CreatedAt: 1})
		})

		for _, tc := range tests {
			a, err := q.Account(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Access(now); got != tc.want {
				t.Errorf("%s: Access = %s, want %s", tc.id, got, tc.want)
			}
			open := tc.want == storage.AccountActive
			if _, err := q.Session(ctx, "s-"+tc.id+"-a", now); (err == nil) != open {
				t.Errorf("%s: Session = %v; want found %v", tc.id, err, open)
			}
			var used string
			write(t, s, func(ctx context.Context, tx *storage.Tx) error {
				used, err = tx.UseSigninLink(ctx, "l-"+tc.id+"-a", now)
				if errors.Is(err, storage.ErrNotFound) {
					return nil
				}
				return err
			})
			if (used == tc.id) != open {
				t.Errorf("%s: UseSigninLink = %q; want usable %v", tc.id, used, open)
			}
		}
		if _, err := q.Session(ctx, "s-operator", now); err != nil {
			t.Errorf("operator session: %v", err)
		}

		// Plans that ended in (now-2, now], and in (now-1, now+1]: the
		// window's ends count once each.
		for _, w := range []struct {
			after, through int64
			want           []string
		}{
			{now - 2, now, []string{"ended", "ends-now"}},
			{now - 1, now + 1, []string{"ends-now", "ends-later", "suspended-ends-later"}},
			{now + 1, now + 5, []string{}},
		} {
			if got, err := q.PlansEnded(ctx, w.after, w.through); err != nil || !reflect.DeepEqual(got, w.want) {
				t.Errorf("PlansEnded(%d, %d) = %v, %v; want %v", w.after-now, w.through-now, got, err, w.want)
			}
		}

		// The open team: one session and one unused link are left after the
		// link above was used.
		ss, ls, err := q.TeamAccess(ctx, "open", now)
		if err != nil || len(ss) != 2 || len(ls) != 1 || ls[0].ID != "l-open-b" {
			t.Fatalf("TeamAccess(open) = %d sessions, %v links, %v; want 2 and [l-open-b]", len(ss), ls, err)
		}
		if ss, _, _ := q.TeamAccess(ctx, "open", now+100); len(ss) != 0 {
			t.Errorf("TeamAccess after expiry = %d sessions, want 0", len(ss))
		}

		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for _, c := range []struct {
				end      func(context.Context, string, string) (bool, error)
				acct, id string
				want     bool
			}{
				{tx.EndTeamSession, "open", "s-open-a", true},
				{tx.EndTeamSession, "open", "s-open-a", false},  // gone
				{tx.EndTeamSession, "ended", "s-open-b", false}, // another team's
				{tx.EndTeamSession, "", "s-operator", false},    // the operator's
				{tx.EndSigninLink, "open", "l-open-a", false},   // used
				{tx.EndSigninLink, "ended", "l-open-b", false},  // another team's
				{tx.EndSigninLink, "open", "l-open-b", true},
			} {
				if got, err := c.end(ctx, c.acct, c.id); err != nil || got != c.want {
					t.Errorf("end %s of %q = %v, %v; want %v", c.id, c.acct, got, err, c.want)
				}
			}
			sessions, links, err := tx.EndTeamAccess(ctx, "ended")
			if err != nil || sessions != 2 || links != 2 {
				t.Errorf("EndTeamAccess(ended) = %d, %d, %v; want 2, 2", sessions, links, err)
			}
			return nil
		})
		if _, err := q.Session(ctx, "s-operator", now); err != nil {
			t.Errorf("operator session after ending teams' sessions: %v", err)
		}
		if ss, ls, _ := q.TeamAccess(ctx, "ended", 0); len(ss)+len(ls) != 0 {
			t.Errorf("after EndTeamAccess(ended): %d sessions, %d links", len(ss), len(ls))
		}
	})
}
