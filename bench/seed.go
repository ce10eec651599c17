package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	_ "github.com/lib/pq"

	"github.com/hostmint/hostmint/storage"
)

const zone = "bench.example"

// seed writes an account, the zone as a pool domain and n live hostnames
// h0000000 ... straight into a fresh store, in batches as a bulk import
// would: start-up is measured, not the API.
func seed(d storage.Dialect, dsn string, n int) error {
	ctx := context.Background()
	s, err := storage.Open(ctx, d, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now().UnixMilli()
	_, err = s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc_bench", Name: "bench", Plan: "business", Billing: true, CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom_bench", Name: zone, Status: storage.DomainActive, CreatedAt: now})
	})
	if err != nil {
		return err
	}
	const batch = 5000
	for start := 0; start < n; start += batch {
		hs := make([]storage.Hostname, 0, batch)
		for i := start; i < min(n, start+batch); i++ {
			ip := addr(i)
			label := fmt.Sprintf("h%07d", i)
			hs = append(hs, storage.Hostname{ID: "h_" + label, AccountID: "acc_bench", DomainID: "dom_bench", Label: label,
				Name: label + "." + zone, IP: ip, Addrs: ip, Class: "public", Certificate: "self",
				Status: storage.StatusLive, CreatedAt: now, UpdatedAt: now})
		}
		if _, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.InsertHostnames(ctx, hs) }); err != nil {
			return err
		}
	}
	return nil
}

func addr(i int) string { return fmt.Sprintf("11.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

func writeZone(path string, n int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s.\n@ 3600 IN SOA ns1.%s. hostmaster.%s. 1 3600 600 1209600 60\n@ 3600 IN NS ns1.%s.\nns1 3600 IN A 127.0.0.1\n", zone, zone, zone, zone)
	for i := range n {
		fmt.Fprintf(&b, "h%07d 60 IN A %s\n", i, addr(i))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeQueries: 80 % names that exist, 20 % that do not, spread over all.
func writeQueries(path string, n int) error {
	var b strings.Builder
	for i := range 100_000 {
		j := (i * 7919) % n
		if i%5 == 4 {
			fmt.Fprintf(&b, "m%07d.%s A\n", j, zone)
		} else {
			fmt.Fprintf(&b, "h%07d.%s A\n", j, zone)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// pgDatabase creates a fresh database name on the server of admin (a
// lib/pq URL) and returns its URL and a function that drops it.
func pgDatabase(admin, name string) (string, func(), error) {
	db, err := sql.Open("postgres", admin)
	if err != nil {
		return "", nil, err
	}
	if _, err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
		db.Close()
		return "", nil, err
	}
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		return "", nil, err
	}
	drop := func() {
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	}
	return withDatabase(admin, name), drop, nil
}

// withDatabase replaces the database in a postgres:// URL.
func withDatabase(u, name string) string {
	rest, query, _ := strings.Cut(u, "?")
	if i := strings.LastIndex(rest, "/"); i > len("postgres://") {
		rest = rest[:i]
	}
	if query != "" {
		return rest + "/" + name + "?" + query
	}
	return rest + "/" + name
}

// settle analyzes the seeded database and forces a checkpoint.
func settle(url string) error {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{"VACUUM ANALYZE", "CHECKPOINT"} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
