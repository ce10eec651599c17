package storage_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// What team access costs as the accounts grow: a dashboard page's session
// lookup (which reads its team's access in the same query), from one caller
// and from 64 at once, and a sweep pass for the plans that ended in the
// last minute. Every figure should stay flat across sizes:
//
//	go test -run '^$' -bench TeamAccessAtScale -benchtime 2000x ./storage/
//
// BENCH_ACCOUNTS (comma-separated) replaces the sizes.
func BenchmarkTeamAccessAtScale(b *testing.B) {
	sizes := storagetest.Sizes(b, "BENCH_ACCOUNTS", 1_000, 100_000, 1_000_000)
	const now = int64(1_000_000_000_000)
	for _, d := range storagetest.Dialects {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/accounts=%d", d, n), func(b *testing.B) {
				s := storagetest.Open(b, d)
				seedTeams(b, s, n, now)
				q := s.Reader()
				b.Run("session", func(b *testing.B) {
					for i := range b.N {
						if _, err := q.Session(b.Context(), "s"+strconv.Itoa(i%sessionsSeeded+1), now); err != nil && err != storage.ErrNotFound {
							b.Fatal(err)
						}
					}
				})
				b.Run("session-64-callers", func(b *testing.B) {
					b.SetParallelism(64)
					b.RunParallel(func(pb *testing.PB) {
						i := 0
						for pb.Next() {
							i++
							if _, err := q.Session(b.Context(), "s"+strconv.Itoa(i%sessionsSeeded+1), now); err != nil && err != storage.ErrNotFound {
								b.Error(err)
								return
							}
						}
					})
				})
				b.Run("plans-ended-last-minute", func(b *testing.B) {
					for range b.N {
						ids, err := q.PlansEnded(b.Context(), now-60_000, now)
						if err != nil || len(ids) != 60 {
							b.Fatalf("%d plans ended, %v; want 60", len(ids), err)
						}
					}
				})
			})
		}
	}
}

const sessionsSeeded = 10_000

// seedTeams inserts n accounts: every 100th suspended, every 50th with a
// plan that ended a day before now, one a second in the last minute with a
// plan that ended then (60 in all), and 10 000 sessions spread over them.
func seedTeams(b *testing.B, s *storage.Store, n int, now int64) {
	b.Helper()
	rows := storagetest.Series(s.Dialect())
	accounts := "INSERT INTO accounts (id, name, plan, created_at, suspended_at, plan_ends_at) " +
		"SELECT 'acc_' || i, 'team', 'team', 1, CASE WHEN i % 100 = 0 THEN 1 ELSE 0 END, " +
		"CASE WHEN i <= 60 THEN ? - i * 1000 + 1 WHEN i % 50 = 0 THEN ? - 86400000 ELSE 0 END FROM (" + rows + ") AS r"
	if err := s.Exec(b.Context(), accounts, now, now, n); err != nil {
		b.Fatal(err)
	}
	sessions := "INSERT INTO dashboard_sessions (id, account_id, expires_at, created_at) " +
		"SELECT 's' || i, 'acc_' || (i * 37 % ? + 1), ?, 1 FROM (" + rows + ") AS r"
	if err := s.Exec(b.Context(), sessions, n, now+3_600_000, sessionsSeeded); err != nil {
		b.Fatal(err)
	}
	if s.Dialect() == storage.Postgres {
		if err := s.Exec(b.Context(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}
