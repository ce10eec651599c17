package hostnames

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// What acme-dns registrations cost as they grow, through the rules: an
// update (lock, allowance, publish, change), from one caller and from 64 at
// once over different registrations, the operator's page of the list, the
// snapshot scan of the values still served (1 % of the registrations: it
// grows with them, not with the table) and a purge pass with nothing due.
// Every other figure should stay flat across sizes:
//
//	go test -run '^$' -bench RegistrationsAtScale -benchtime 2000x ./hostnames/
//
// BENCH_REGISTRATIONS (comma-separated) replaces the sizes.
func BenchmarkRegistrationsAtScale(b *testing.B) {
	sizes := storagetest.Sizes(b, "BENCH_REGISTRATIONS", 1_000, 100_000, 1_000_000)
	const password = "0123456789abcdefghijklmnopqrstuvwxyzABCD"
	value := strings.Repeat("v", 43)
	for _, d := range storagetest.Dialects {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/registrations=%d", d, n), func(b *testing.B) {
				st := storagetest.Open(b, d)
				now := time.Now().UnixMilli()
				seedRegistrations(b, st, n, apikey.Hash(password), now)
				hs := New(st, Config{Profile: 1}, slog.New(slog.NewTextHandler(io.Discard, nil)))
				// An allowance no caller reaches: the rules' cost, not the limit, is measured.
				c := NewCertificates(hs, nil, 1<<30).WithACMEDNS("auth.example.org")
				from := netip.MustParseAddr("192.0.2.7")
				update := func(i int) error {
					user := "u" + strconv.Itoa(i%n+1)
					return c.PublishChallenge(context.Background(), ChallengeUpdate{User: user, Key: password,
						Subdomain: "s" + strconv.Itoa(i%n+1), TXT: value, From: from})
				}
				b.Run("update", func(b *testing.B) {
					for i := range b.N {
						if err := update(i * 7919); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("update-64-callers", func(b *testing.B) {
					b.SetParallelism(64)
					var next atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := update(int(next.Add(1)) * 104729); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
				b.Run("list-page", func(b *testing.B) {
					for i := range b.N {
						if _, err := c.Registrations(context.Background(), "u"+strconv.Itoa(i%n+1), 100); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("served-scan", func(b *testing.B) {
					for range b.N {
						seen := 0
						err := st.Reader().ScanServedRegistrations(context.Background(), now-3_600_000, func(*storage.Registration) error {
							seen++
							return nil
						})
						if err != nil || seen < n/100 {
							b.Fatalf("%d served, %v; want at least %d", seen, err, n/100)
						}
					}
				})
				b.Run("purge-pass", func(b *testing.B) {
					for range b.N {
						if _, err := st.PurgeUnusedRegistrations(context.Background(), 1); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// seedRegistrations inserts n registrations u1..un (subdomain s<i>,
// password hash hash), every 100th with a value written at now.
func seedRegistrations(b *testing.B, s *storage.Store, n int, hash string, now int64) {
	b.Helper()
	rows := storagetest.Series(s.Dialect())
	q := "INSERT INTO acme_registrations (id, subdomain, name, password_hash, allow_from, source, txt_new, txt_at, used_at, created_at) " +
		"SELECT 'u' || i, 's' || i, 's' || i || '.auth.example.org', ?, '192.0.2.0/24', '192.0.2.0/24', " +
		"CASE WHEN i % 100 = 0 THEN 'v' ELSE '' END, CASE WHEN i % 100 = 0 THEN CAST(? AS BIGINT) ELSE 0 END, CAST(? AS BIGINT), CAST(? AS BIGINT) FROM (" + rows + ") AS r"
	db, err := sql.Open(string(s.Dialect()), s.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if s.Dialect() == storage.Postgres {
		for i := 1; strings.Contains(q, "?"); i++ {
			q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
		}
	}
	if _, err := db.ExecContext(b.Context(), q, hash, now, now, now, n); err != nil {
		b.Fatal(err)
	}
	if s.Dialect() == storage.Postgres {
		if _, err := db.ExecContext(b.Context(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}
