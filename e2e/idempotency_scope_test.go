package e2e

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// Idempotency-Key belongs to the credential that sent it, at the level an
// attacker meets it: an anonymous acme-dns registration takes no key (so
// nothing is kept to replay, and the admin's keys can be neither taken
// nor probed), and an answer holding a secret is kept only sealed.

// idemRow is one kept answer, read from the store itself.
type idemRow struct {
	scope, key, answer string
	sealed             bool
}

// idemRows is every row of the idempotency table of s's store.
func idemRows(t *testing.T, s *server) []idemRow {
	t.Helper()
	driver := "sqlite"
	if s.dialect == storage.Postgres {
		driver = "postgres"
	}
	db, err := sql.Open(driver, s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), "SELECT scope, key, answer, sealed FROM idempotency_keys")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []idemRow
	for rows.Next() {
		var r idemRow
		if err := rows.Scan(&r.scope, &r.key, &r.answer, &r.sealed); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// idemKept is the row of scope's key, if there is one.
func idemKept(rows []idemRow, scope, key string) (idemRow, bool) {
	for _, r := range rows {
		if r.scope == scope && r.key == key {
			return r, true
		}
	}
	return idemRow{}, false
}

// idemRegister is an anonymous acme-dns registration from address from (a
// trusted proxy's X-Forwarded-For) carrying Idempotency-Key key.
func (s *server) idemRegister(from, key string) response {
	s.t.Helper()
	return s.doWith("POST", "/api/acme/register", "", nil, map[string]string{"Idempotency-Key": key, "X-Forwarded-For": from})
}

func TestIdempotencyScope(t *testing.T) {
	t.Parallel()
	keyLine := recKeyLine(t)
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, acmeRegOptions(options{profile: 2, dialect: d,
				extra: []string{keyLine, "trusted_proxy 127.0.0.0/8"}}))

			// (a) The same key from two addresses: two registrations, none
			// replayed, and no password kept anywhere in the table.
			const k = "shared-key-1"
			first := s.idemRegister("198.51.100.7", k)
			second := s.idemRegister("203.0.113.9", k)
			for i, r := range []response{first, second} {
				if r.status != 201 || r.header.Get("Idempotent-Replayed") != "" || r.str("password") == "" {
					t.Fatalf("registration %d with key %s: %d %s (replayed %q), want 201 not replayed",
						i+1, k, r.status, r.raw, r.header.Get("Idempotent-Replayed"))
				}
			}
			if first.str("username") == second.str("username") || first.str("password") == second.str("password") {
				t.Errorf("two callers with one Idempotency-Key got one registration: %s and %s", first.raw, second.raw)
			}
			// Even the same caller's retry is a new registration: the route
			// takes no key at all.
			if again := s.idemRegister("198.51.100.7", k); again.status != 201 || again.str("username") == first.str("username") {
				t.Errorf("the first caller's retry with the key: %d %s, want a new registration", again.status, again.raw)
			}
			for _, row := range idemRows(t, s) {
				for _, r := range []response{first, second} {
					if strings.Contains(row.answer, r.str("password")) {
						t.Errorf("row (%s, %s) of idempotency_keys holds a registration's password in the clear", row.scope, row.key)
					}
				}
			}
			if row, ok := idemKept(idemRows(t, s), "admin", k); ok {
				t.Errorf("an anonymous registration kept an answer in the admin's namespace: %+v", row)
			}

			// (b) The admin's create with the key anonymous callers used is
			// its own: 201, not 409; and a registration with the key the
			// admin used after it neither replays the admin's answer nor
			// tells that the admin used it.
			acct := s.doWith("POST", "/api/admin/accounts", s.admin, map[string]any{"name": "idem", "plan": "team"}, idem(k))
			if acct.status != 201 || acct.header.Get("Idempotent-Replayed") != "" || acct.str("id") == "" {
				t.Fatalf("the admin's create with an anonymous caller's key: %d %s, want 201", acct.status, acct.raw)
			}
			probe := s.idemRegister("198.51.100.8", k)
			if probe.status != 201 || probe.header.Get("Idempotent-Replayed") != "" ||
				strings.Contains(string(probe.raw), acct.str("id")) || probe.str("password") == "" {
				t.Errorf("a registration with the admin's key: %d %s (replayed %q), want a registration of its own",
					probe.status, probe.raw, probe.header.Get("Idempotent-Replayed"))
			}
			// The admin's retry is still answered from its own kept answer.
			if r := s.doWith("POST", "/api/admin/accounts", s.admin, map[string]any{"name": "idem", "plan": "team"}, idem(k)); r.status != 201 ||
				r.str("id") != acct.str("id") || r.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the admin's retry: %d %s, want its first answer replayed", r.status, r.raw)
			}

			// (c) Kept answers that hold a secret are sealed: an API key's
			// TSIG key and DNS-01 credential, the admin's API key and
			// sign-in link.
			teamID, key := s.team(t, "idem-scope.example.net")
			hid, _ := s.recHost(t, key, "web", "198.41.0.40")
			tsig := s.doWith("POST", "/api/v1/tsig-keys", key, map[string]any{"name": "ci"}, idem(k))
			cred := s.doWith("POST", acmeCredPath(hid), key, nil, idem("cred-"+k))
			apiKey := s.doWith("POST", "/api/admin/accounts/"+teamID+"/keys", s.admin, map[string]any{"name": "ci"}, idem("key-"+k))
			link := s.doWith("POST", "/api/admin/accounts/"+teamID+"/signin-links", s.admin, nil, idem("link-"+k))
			rows := idemRows(t, s)
			scope := "key:" + keyIDOf(t, key)
			for _, c := range []struct {
				what, scope, key, secret string
				r                        response
			}{
				{"TSIG key", scope, k, tsig.str("secret"), tsig},
				{"DNS-01 credential", scope, "cred-" + k, cred.str("password"), cred},
				{"API key", "admin", "key-" + k, apiKey.str("key"), apiKey},
				{"sign-in link", "admin", "link-" + k, link.str("url"), link},
			} {
				if c.r.status != 201 || c.secret == "" {
					t.Fatalf("%s create: %d %s", c.what, c.r.status, c.r.raw)
				}
				row, ok := idemKept(rows, c.scope, c.key)
				if !ok {
					t.Errorf("%s: no kept answer under (%s, %s)", c.what, c.scope, c.key)
					continue
				}
				if !row.sealed || strings.Contains(row.answer, c.secret) {
					t.Errorf("%s: kept answer sealed=%v, holds the secret in the clear: %v", c.what, row.sealed, strings.Contains(row.answer, c.secret))
				}
			}
			// The sealed answers still serve their retries.
			if r := s.doWith("POST", "/api/v1/tsig-keys", key, map[string]any{"name": "ci"}, idem(k)); r.status != 201 ||
				r.str("secret") != tsig.str("secret") || r.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the TSIG key's retry: %d %s, want its first answer replayed", r.status, r.raw)
			}
			for _, row := range idemRows(t, s) {
				if row.scope != "admin" && !strings.HasPrefix(row.scope, "key:") {
					t.Errorf("a kept answer of no credential: scope %q key %q", row.scope, row.key)
				}
			}
		})
	}
}
