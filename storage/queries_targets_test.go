package storage_test

import (
	"reflect"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

func TestTargetsDueFair(t *testing.T) {
	const now = 1_000
	following := func(id, account, status string, refreshAt int64) *storage.Hostname {
		h := host(id, account, id, status, 0, 1)
		h.Target, h.RefreshAt = "app.platform.test", refreshAt
		return h
	}
	tests := []struct {
		limit int
		want  []string
	}{
		// Accounts take turns, each in its own refresh order; ties of
		// refresh time fall to the id.
		{100, []string{"a1", "o1", "a2", "o2", "a3", "a4", "a5"}},
		{3, []string{"a1", "o1", "a2"}},
		{1, []string{"a1"}},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		insertHosts(t, s,
			following("a3", acct, storage.StatusLive, 3),
			following("a1", acct, storage.StatusLive, 1),
			following("a2", acct, storage.StatusPending, 2),
			following("a5", acct, storage.StatusLive, 4),
			following("a4", acct, storage.StatusLive, 4),
			following("o2", other, storage.StatusLive, now),
			following("o1", other, storage.StatusLive, 10),
			following("later", other, storage.StatusLive, now+1),
			following("released", other, storage.StatusReleased, 0),
			following("suspended", acct, storage.StatusSuspended, 0),
			host("by-ip", other, "by-ip", storage.StatusLive, 0, 1),
		)
		for _, tc := range tests {
			hs, err := s.Reader().TargetsDueFair(t.Context(), now, tc.limit)
			var got []string
			for _, h := range hs {
				got = append(got, h.ID)
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TargetsDueFair(limit %d) = %v, %v; want %v", tc.limit, got, err, tc.want)
			}
		}
		// A closed team's targets are not refreshed: suspended, or its plan ended.
		for _, close := range []string{"UPDATE accounts SET suspended_at = 5 WHERE id = ?", "UPDATE accounts SET plan_ends_at = 999 WHERE id = ?"} {
			if err := s.Exec(t.Context(), close, other); err != nil {
				t.Fatal(err)
			}
			hs, err := s.Reader().TargetsDueFair(t.Context(), now, 100)
			for _, h := range hs {
				if h.AccountID == other {
					t.Errorf("after %q: %s of the closed team is due, %v", close, h.ID, err)
				}
			}
			s.Exec(t.Context(), "UPDATE accounts SET suspended_at = 0, plan_ends_at = 0 WHERE id = ?", other)
		}
	})
}
