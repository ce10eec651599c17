package storage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// fillOperator gives s n accounts (every thousandth closed) and n
// hostnames, ten to each of the first n/10 accounts, every hundredth with
// an IPv6 address beside its IPv4 one; creation times are the row numbers.
// One statement each, generated in SQL: a million rows in seconds.
func fillOperator(tb testing.TB, s *storage.Store, n int) {
	tb.Helper()
	if err := s.Exec(context.Background(), "INSERT INTO domains (id, name, status, created_at) VALUES ('d', 'example.test', 'active', 1)"); err != nil {
		tb.Fatal(err)
	}
	inChunks(tb, s, n,
		"INSERT INTO accounts (id, name, plan, created_at, closed_at) "+
			"SELECT 'a' || i, 'team ' || i, 'pro', i, CASE WHEN i % 1000 = 0 THEN i ELSE 0 END FROM s",
		"INSERT INTO hostnames (id, account_id, domain_id, label, name, ip, addrs, status, created_at, updated_at) "+
			"SELECT 'h' || i, 'a' || (i % "+fmt.Sprint(max(n/10, 1))+" + 1), 'd', 'l' || i, 'l' || i || '.example.test', "+
			"'10.' || (i / 65536 % 256) || '.' || (i / 256 % 256) || '.' || (i % 256), "+
			"CASE WHEN i % 100 = 0 THEN '10.' || (i / 65536 % 256) || '.' || (i / 256 % 256) || '.' || (i % 256) || ',2001:db8::' || i ELSE '' END, "+
			"'live', i, i FROM s")
	if err := s.Exec(context.Background(), "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
}

// seriesFrom is a WITH clause of the numbers from to to as s(i):
// PostgreSQL's generate_series (its recursive CTEs are slow), SQLite's
// recursive CTE.
func seriesFrom(s *storage.Store, from, to int) string {
	if s.Dialect() == storage.Postgres {
		return fmt.Sprintf("WITH s(i) AS (SELECT generate_series(%d, %d)) ", from, to)
	}
	return fmt.Sprintf("WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE i < %d) ", from, to)
}

// inChunks runs each statement (a WITH clause of seriesFrom before it) over
// 1..n in rounds of 25 k: a statement of the store must answer within
// pgwire.StallTimeout.
func inChunks(tb testing.TB, s *storage.Store, n int, stmts ...string) {
	tb.Helper()
	for _, q := range stmts {
		for from := 1; from <= n; from += 25_000 {
			if err := s.Exec(context.Background(), seriesFrom(s, from, min(from+24_999, n))+q); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkOperatorLookups is each of the operator's look-ups
// (GET /api/admin/accounts and /api/admin/hostnames) at 10 k, 100 k and
// 1 M accounts and hostnames: every one reads its page through an index,
// so its cost stays flat as the tables grow.
//
//	go test ./storage -run '^$' -bench OperatorLookups -benchtime 200x
func BenchmarkOperatorLookups(b *testing.B) {
	for _, d := range storagetest.Dialects {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%dk", d, n/1000), func(b *testing.B) {
				s := storagetest.Open(b, d)
				fillOperator(b, s, n)
				q := s.Reader()
				mid := storage.Cursor{CreatedAt: int64(n / 2), ID: fmt.Sprintf("a%d", n/2)}
				lookups := []struct {
					name string
					run  func(context.Context) (int, error)
				}{
					{"accounts-first-page", func(ctx context.Context) (int, error) {
						as, _, err := q.ListAccounts(ctx, storage.AccountQuery{Limit: 100})
						return len(as), err
					}},
					{"accounts-deep-page", func(ctx context.Context) (int, error) {
						as, _, err := q.ListAccounts(ctx, storage.AccountQuery{Limit: 100, After: mid})
						return len(as), err
					}},
					{"accounts-closed", func(ctx context.Context) (int, error) {
						as, _, err := q.ListAccounts(ctx, storage.AccountQuery{Status: storage.AccountClosed, Limit: 100})
						return len(as), err
					}},
					{"accounts-by-name", func(ctx context.Context) (int, error) {
						as, _, err := q.ListAccounts(ctx, storage.AccountQuery{Name: fmt.Sprintf("team %d", n/3), Limit: 100})
						return len(as), err
					}},
					{"hostnames-by-name", func(ctx context.Context) (int, error) {
						hs, _, err := q.FindHostnamesFor(ctx, storage.HostnameQuery{Name: fmt.Sprintf("l%d.example.test", n/3), Limit: 100})
						return len(hs), err
					}},
					{"hostnames-by-ip", func(ctx context.Context) (int, error) {
						hs, _, err := q.FindHostnamesFor(ctx, storage.HostnameQuery{Addr: "10.0.1.7", Limit: 100})
						return len(hs), err
					}},
					{"hostnames-by-second-ip", func(ctx context.Context) (int, error) {
						hs, _, err := q.FindHostnamesFor(ctx, storage.HostnameQuery{Addr: fmt.Sprintf("2001:db8::%d", n/2), Limit: 100})
						return len(hs), err
					}},
					{"hostnames-by-account", func(ctx context.Context) (int, error) {
						hs, _, err := q.FindHostnamesFor(ctx, storage.HostnameQuery{AccountID: fmt.Sprintf("a%d", n/20), Limit: 100})
						return len(hs), err
					}},
				}
				for _, l := range lookups {
					b.Run(l.name, func(b *testing.B) {
						for b.Loop() {
							if got, err := l.run(b.Context()); err != nil || got == 0 {
								b.Fatalf("%d rows, %v", got, err)
							}
						}
					})
				}
			})
		}
	}
}

// fillAccount gives s an account id holding k live hostnames, each with a
// TXT record, created after every row fillOperator made.
func fillAccount(tb testing.TB, s *storage.Store, id string, k int) {
	tb.Helper()
	if err := s.Exec(context.Background(), fmt.Sprintf("INSERT INTO accounts (id, name, plan, created_at) VALUES ('%s', '%s', 'business', 9000000000)", id, id)); err != nil {
		tb.Fatal(err)
	}
	inChunks(tb, s, k,
		fmt.Sprintf("INSERT INTO hostnames (id, account_id, domain_id, label, name, ip, addrs, status, created_at, updated_at) "+
			"SELECT '%[1]s-' || i, '%[1]s', 'd', '%[1]s-' || i, '%[1]s-' || i || '.example.test', '10.9.0.1', '10.9.0.1', 'live', 9000000000 + i, 9000000000 + i FROM s", id),
		fmt.Sprintf("INSERT INTO records (id, hostname_id, name, type, data, created_at, updated_at) "+
			"SELECT '%[1]s-r' || i, '%[1]s-' || i, '%[1]s-' || i || '.example.test', 'TXT', 'v', 1, 1 FROM s", id))
}

// BenchmarkCloseAccount closes one account of 1 k, 10 k and 100 k
// hostnames in a store of 1 M others (what DELETE /api/admin/accounts/{id}
// writes): its cost follows the account's hostnames, one set-based
// statement for each kind of row, never the table's size.
//
//	go test ./storage -run '^$' -bench CloseAccount -benchtime 1x
func BenchmarkCloseAccount(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			s := storagetest.Open(b, d)
			fillOperator(b, s, 1_000_000)
			for _, k := range []int{1_000, 10_000, 100_000} {
				b.Run(fmt.Sprintf("%dk", k/1000), func(b *testing.B) {
					round := 0
					for b.Loop() {
						// A fresh account each round: a close is once.
						b.StopTimer()
						round++
						id := fmt.Sprintf("big%d-%d", k, round)
						fillAccount(b, s, id, k)
						b.StartTimer()
						n := 0
						_, err := s.Write(b.Context(), func(ctx context.Context, tx *storage.Tx) error {
							var err error
							n, err = tx.ReleaseHostnames(ctx, storage.HostnameSet{AccountID: id}, 1)
							return err
						})
						if err != nil || n != k {
							b.Fatalf("released %d of %d: %v", n, k, err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*k), "ns/hostname")
				})
			}
		})
	}
}
