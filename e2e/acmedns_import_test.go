package e2e

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
	"golang.org/x/crypto/bcrypt"
)

// acmeDNSStore is a new database of dialect d holding acme-dns's schema,
// as an acme-dns server creates it: its DSN, and the database opened.
func acmeDNSStore(t *testing.T, d storage.Dialect) (string, *sql.DB) {
	t.Helper()
	dsn := storagetest.DSN(t, d)
	db := openSQL(t, d, dsn)
	for _, stmt := range acmeDNSSchema(d) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return dsn, db
}

// acmeDNSSchema is acme-dns's own (db_version 1), as it creates it.
func acmeDNSSchema(d storage.Dialect) []string {
	txt := "CREATE TABLE IF NOT EXISTS txt(Subdomain TEXT NOT NULL, Value TEXT NOT NULL DEFAULT '', LastUpdate INT)"
	if d == storage.Postgres {
		txt = "CREATE TABLE IF NOT EXISTS txt(rowid SERIAL, Subdomain TEXT NOT NULL, Value TEXT NOT NULL DEFAULT '', LastUpdate INT)"
	}
	return []string{
		"CREATE TABLE IF NOT EXISTS acmedns(Name TEXT, Value TEXT)",
		"INSERT INTO acmedns (Name, Value) VALUES ('db_version', '1')",
		"CREATE TABLE IF NOT EXISTS records(Username TEXT UNIQUE NOT NULL PRIMARY KEY, Password TEXT UNIQUE NOT NULL, " +
			"Subdomain TEXT UNIQUE NOT NULL, AllowFrom TEXT)",
		txt,
	}
}

// An acme-dns server's registrations move with `hostmint migrate -from
// acme-dns:STORE`: same username, password (acme-dns's bcrypt hash, taken
// once and replaced by Hostmint's), subdomain, allowfrom and served values,
// so its users change nothing but where the domain's delegation points.
// Importing again adds nothing.
func TestMigrateFromACMEDNS(t *testing.T) {
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			src, db := acmeDNSStore(t, d)
			const (
				userA, subA = "8d4b7a3e-57a5-4a36-9d44-6c1f54b6bd01", "0c7f4b3a-2f0e-4c5b-8b8b-6a1e3a9d2c11"
				userB, subB = "a2c3e4f5-6b7c-4d8e-9f0a-1b2c3d4e5f60", "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
				passA       = "VbBdl-6T1fUqSkZQzHcG5yPmXwEaJrN3o8iD0_2L"
				passB       = "Wc2Kf_8QpNnR4sTtUu6vXxYy0zAa1Bb3Cc5Dd7Ee"
			)
			now := time.Now().Unix()
			older, newer := strings.Repeat("o", 43), strings.Repeat("n", 43)
			rows := []struct {
				q    string
				args []any
			}{
				{"INSERT INTO records (Username, Password, Subdomain, AllowFrom) VALUES (?, ?, ?, ?)", []any{userA, hash(t, passA), subA, "[]"}},
				{"INSERT INTO records (Username, Password, Subdomain, AllowFrom) VALUES (?, ?, ?, ?)", []any{userB, hash(t, passB), subB, `["192.0.2.0/24"]`}},
				{"INSERT INTO txt (Subdomain, Value, LastUpdate) VALUES (?, ?, ?)", []any{subA, older, now - 600}},
				{"INSERT INTO txt (Subdomain, Value, LastUpdate) VALUES (?, ?, ?)", []any{subA, newer, now - 60}},
				{"INSERT INTO txt (Subdomain, LastUpdate) VALUES (?, 0)", []any{subB}},
				{"INSERT INTO txt (Subdomain, LastUpdate) VALUES (?, 0)", []any{subB}},
			}
			for _, r := range rows {
				q := rebind(d, r.q)
				if _, err := db.Exec(q, r.args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}

			dst := storagetest.DSN(t, d)
			args := []string{"migrate", "-from", "acme-dns:" + storeArg(d, src), "-to", storeArg(d, dst)}
			if code, out := hostmint(t, args...); code != 2 || !strings.Contains(out, "-acme-dns-domain") {
				t.Fatalf("migrate without -acme-dns-domain: exit %d, want 2 naming the flag:\n%s", code, out)
			}
			args = append(args, "-acme-dns-domain", "auth.example.org")
			if code, out := hostmint(t, args...); code != 0 || !strings.Contains(out, "imported 2 of 2") {
				t.Fatalf("migrate: exit %d, want 0 and 2 imported:\n%s", code, out)
			}

			s := start(t, options{profile: 1, dialect: d, dsn: dst, extra: []string{"acme_dns_domain auth.example.org"}})
			if got := txtAt(s, subA+".auth.example.org."); !slices.Equal(got, []string{newer, older}) {
				t.Fatalf("imported values at %s: %v, want [%s %s]", subA, got, newer, older)
			}
			update := func(user, pass, sub, value string) response {
				return s.acmeSend(t, "POST", "/api/acme/update", map[string]string{"X-Api-User": user, "X-Api-Key": pass},
					fmt.Sprintf(`{"subdomain":%q,"txt":%q}`, sub, value))
			}
			if r := update(userA, passA[:39]+"x", subA, newer); r.status != 401 {
				t.Fatalf("wrong password: %d %s, want 401", r.status, r.raw)
			}
			for _, v := range []string{strings.Repeat("a", 43), strings.Repeat("b", 43)} { // the second after the rehash
				if r := update(userA, passA, subA, v); r.status != 200 {
					t.Fatalf("update with the acme-dns password: %d %s, want 200", r.status, r.raw)
				}
			}
			if got := txtAt(s, subA+".auth.example.org."); !slices.Equal(got, []string{strings.Repeat("b", 43), strings.Repeat("a", 43)}) {
				t.Fatalf("values after two updates: %v", got)
			}
			var stored string
			if err := openSQL(t, d, dst).QueryRow(rebind(d, "SELECT password_hash FROM acme_registrations WHERE id = ?"), userA).Scan(&stored); err != nil ||
				strings.HasPrefix(stored, "$2") {
				t.Fatalf("password hash after a matching update: %.7s… (%v), want Hostmint's own, not bcrypt", stored, err)
			}
			if r := update(userB, passB, subB, newer); r.status != 403 {
				t.Fatalf("update from outside the imported allowfrom: %d %s, want 403", r.status, r.raw)
			}
			if m := s.query(subB+".auth.example.org", dns.TypeTXT, "udp"); len(m.Answer) != 0 {
				t.Fatalf("a registration without values answers %v", m.Answer)
			}
			if code, out := hostmint(t, args...); code != 0 || !strings.Contains(out, "imported 0 of 2") {
				t.Fatalf("migrate again: exit %d, want 0 and nothing imported:\n%s", code, out)
			}

			// Registrations imported under another domain than the Corefile's
			// acme_dns_domain are refused, and never answered.
			other, odb := acmeDNSStore(t, d)
			const userC, subC, passC = "c3d4e5f6-0718-4293-a4b5-c6d7e8f90a1b", "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "Xd3Lg_9RqOoS5tUv7wYz1aAb2Cc4Dd6Ee8Ff0Gg1"
			if _, err := odb.Exec(rebind(d, "INSERT INTO records (Username, Password, Subdomain, AllowFrom) VALUES (?, ?, ?, '[]')"), userC, hash(t, passC), subC); err != nil {
				t.Fatal(err)
			}
			if code, out := hostmint(t, "migrate", "-from", "acme-dns:"+storeArg(d, other), "-to", storeArg(d, dst), "-acme-dns-domain", "old.example.org"); code != 0 {
				t.Fatalf("migrate under old.example.org: exit %d\n%s", code, out)
			}
			if r := update(userC, passC, subC, newer); r.status != 403 || !strings.Contains(r.str("error"), "acme_dns_domain") {
				t.Fatalf("update of a registration under another domain: %d %s, want 403 naming acme_dns_domain", r.status, r.raw)
			}
			if got := txtAt(s, subC+".old.example.org."); len(got) != 0 {
				t.Fatalf("a registration under another domain answers %v", got)
			}
		})
	}
}

// hash is acme-dns's hash of a password (bcrypt, cost 10).
func hash(t *testing.T, password string) string {
	h, err := bcrypt.GenerateFromPassword([]byte(password), 10)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// txtAt is the TXT strings served at name, in answer order.
func txtAt(s *server, name string) []string {
	var out []string
	for _, rr := range s.query(name, dns.TypeTXT, "udp").Answer {
		if t, ok := rr.(*dns.TXT); ok {
			out = append(out, t.Txt...)
		}
	}
	return out
}

// rebind spells placeholders for d.
func rebind(d storage.Dialect, q string) string {
	if d == storage.Postgres {
		for i := 1; strings.Contains(q, "?"); i++ {
			q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
		}
	}
	return q
}
