package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
)

// TestSecretsStayHidden runs the binary through every kind of secret the
// service hands out or holds (admin token, API keys, DNS-01 passwords, a
// TSIG key, the encryption key, a DNSSEC private key) and then reads its
// whole output and
// every row of its store: no secret appears in either, only hashes and
// sealed keys; the admin token file is 0600.
func TestSecretsStayHidden(t *testing.T) {
	t.Parallel()
	keyLine := certKeyFile(t)
	sealKey, err := os.ReadFile(strings.TrimPrefix(keyLine, "cert_encryption_key_file "))
	if err != nil {
		t.Fatal(err)
	}
	s, p := spawn(t, options{profile: 2, extra: []string{keyLine, "dynamic_update"}})
	if fi, err := os.Stat(filepath.Join(s.dir, "admin.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	team, key := s.team(t, "secret.example.net")
	second := s.key(t, team, nil)
	id := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "vault"}).str("id")
	s.live(t, key, id)
	cred := s.acmeCredential(t, key, id)
	s.acmeUpdate(t, cred, strings.Repeat("v", 43))
	tsig := s.tsig("/api/v1/tsig-keys", key, nil)
	s.mustUpdate(tsig, "zone secret.example.net\nupdate add _acme-challenge.vault.secret.example.net 60 TXT "+strings.Repeat("t", 43))
	s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, "secret.example.net"), s.admin, map[string]any{"dnssec": true})

	// Failed attempts carry secrets too, near misses of real ones.
	s.must(401, "GET", "/api/v1/hostnames", key+"x", nil)
	s.must(401, "GET", "/api/admin/domains", s.admin+"x", nil)
	bad := cred
	bad.pass += "x"
	if r := s.acmeSend(t, "POST", "/api/acme/update", bad.headers(""), acmeBody("subdomain", bad.user, "txt", strings.Repeat("w", 43))); r.status != 401 {
		t.Fatalf("acme-dns update with a wrong password: %d %s", r.status, r.raw)
	}
	s.must(200, "DELETE", "/api/admin/keys/"+keyIDOf(t, second), s.admin, nil)

	secrets := map[string]string{
		"admin token":         s.admin,
		"API key":             key,
		"API key secret":      secretOf(t, key),
		"revoked key secret":  secretOf(t, second),
		"DNS-01 password":     cred.pass,
		"TSIG secret":         tsig.secret,
		"encryption key":      strings.TrimSpace(string(sealKey)),
		"a wrong key guessed": key + "x",
	}
	out := p.output()
	dump := storeDump(t, storage.SQLite, s.dsn)
	if !strings.Contains(dump, "vault.secret.example.net") {
		t.Fatal("the store dump lacks the hostname: it does not read the store")
	}
	for what, v := range secrets {
		if strings.Contains(out, v) {
			t.Errorf("the server's output holds the %s", what)
		}
		if strings.Contains(dump, v) {
			t.Errorf("the store holds the %s in the clear", what)
		}
	}
	if strings.Contains(dump, "PRIVATE KEY") || strings.Contains(dump, "Private-key-format") {
		t.Errorf("the store holds a private key in the clear")
	}
}

func keyIDOf(t *testing.T, token string) string  { id, _ := keyParts(t, token); return id }
func secretOf(t *testing.T, token string) string { _, s := keyParts(t, token); return s }

// keyParts splits an API key into its id and its secret.
func keyParts(t *testing.T, token string) (id, secret string) {
	t.Helper()
	id, secret, ok := apikey.Parse(token)
	if !ok {
		t.Fatalf("%q is not a key", token)
	}
	return id, secret
}

// storeDump is every value of every table of a store, as text.
func storeDump(t testing.TB, d storage.Dialect, dsn string) string {
	t.Helper()
	driver, list := "sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"
	if d == storage.Postgres {
		driver, list = "postgres", "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tables, err := column(ctx, db, list)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v\t", v)
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	if b.Len() == 0 {
		t.Fatal("the store dump is empty")
	}
	return b.String()
}

func column(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
