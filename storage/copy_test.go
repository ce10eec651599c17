package storage_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// Copy's table list is the whole schema: a table added by a migration but
// not to the list would be silently left behind by a move.
func TestCopyCoversSchema(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := storagetest.Open(t, d)
			got, err := s.CatalogTables(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := append(storage.Tables(), "schema_migrations")
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("tables %v, Copy copies %v", got, want)
			}
		})
	}
}

// fill writes at least one row into every table, with the values that
// differ between dialects: booleans, NULLs, and serial ids with gaps.
func fill(t *testing.T, s *storage.Store) {
	t.Helper()
	ctx := context.Background()
	stmts := []struct {
		q    string
		args []any
	}{
		{"INSERT INTO accounts (id, name, plan, cap, billing, created_at) VALUES ('a1', 'one', 'free', NULL, ?, 1)", []any{false}},
		{"INSERT INTO accounts (id, name, plan, cap, billing, created_at) VALUES ('a2', 'two ünïcode', 'pro', 50, ?, 2)", []any{true}},
		{"INSERT INTO api_keys (id, account_id, secret_hash, scopes, created_at) VALUES ('k1', 'a1', 'sha256:abc', '[]', 3)", nil},
		{"INSERT INTO tsig_keys (id, account_id, key_name, algorithm, secret_sealed, scopes, created_at) VALUES ('t1', 'a1', 't1.tsig', 'hmac-sha256', 'sealed', '[]', 3)", nil},
		{"INSERT INTO domains (id, name, account_id, dnssec, dnssec_key, created_at) VALUES ('d1', 'example.org', NULL, ?, 'sealed:xyz', 4)", []any{true}},
		{"INSERT INTO domains (id, name, account_id, created_at) VALUES ('d2', 'team.example.net', 'a2', 5)", nil},
		{"INSERT INTO hostnames (id, account_id, domain_id, label, name, ip, addrs, status, created_at, updated_at) VALUES ('h1', 'a1', 'd1', 'x', 'x.example.org', '192.0.2.1', '192.0.2.1', 'live', 6, 6)", nil},
		{"INSERT INTO retired_labels (domain_id, label, account_id, retired_at) VALUES ('d1', 'old', 'a1', 7)", nil},
		{"INSERT INTO changes (id, kind, ref, created_at) VALUES (3, 'hostname', 'h1', 8)", nil},
		{"INSERT INTO changes (id, kind, ref, created_at) VALUES (41, 'hostname', 'h1', 9)", nil},
		{"INSERT INTO changes_compacted (id, through) VALUES (1, 2)", nil},
		{"INSERT INTO rate_events (id, account_id, kind, at) VALUES (7, 'a1', 'create', 10)", nil},
		{"INSERT INTO rate_buckets (account_id, kind, tat) VALUES ('a1', 'create', 10)", nil},
		{"INSERT INTO records (id, hostname_id, name, type, data, created_at, updated_at) VALUES ('r1', 'h1', '', 'TXT', '{\"text\":\"hi\"}', 11, 11)", nil},
		{"INSERT INTO acme_credentials (id, hostname_id, password_hash, created_at) VALUES ('c1', 'h1', '$2a$10$hash', 12)", nil},
		{"INSERT INTO challenges (id, hostname_id, value, created_at) VALUES (5, 'h1', 'v', 13)", nil},
		{"INSERT INTO acme_registrations (id, subdomain, name, password_hash, allow_from, source, txt_new, txt_at, used_at, created_at) VALUES ('r1', 's1', 's1.auth.example.org', 'h', '192.0.2.0/24', '192.0.2.0/24', 'v', 13, 13, 12)", nil},
		{"INSERT INTO acme_accounts (ca, email, key_sealed, registration, created_at) VALUES ('https://ca', 'a@example.org', 'sealed', '{}', 14)", nil},
		{"INSERT INTO certificates (hostname_id, status, key_sealed, updated_at) VALUES ('h1', 'issued', 'sealed', 15)", nil},
		{"INSERT INTO expiry_marks (id, at, hostname_id) VALUES (1, 15, 'h1')", nil},
		{"INSERT INTO dashboard_sessions (id, account_id, expires_at, created_at) VALUES ('s1', 'a1', 16, 16)", nil},
		{"INSERT INTO signin_links (id, account_id, expires_at, created_at) VALUES ('l1', 'a1', 17, 17)", nil},
		{"INSERT INTO heartbeat (id, at) VALUES (1, 19)", nil},
		{"INSERT INTO idempotency_keys (scope, key, fingerprint, status, answer, sealed, created_at) VALUES ('account:a1', 'k1', 'f', 201, '{}', TRUE, 20)", nil},
		{"INSERT INTO audit_log (id, at, actor, account_id, action, object, result, status, address) VALUES (9, 18, 'key:k1', 'a1', 'POST /api/v1/hostnames', 'hostname:h1', 'ok', 201, '127.0.0.1')", nil},
		{"INSERT INTO seen_macs (digest, expires_at) VALUES ('d1', 21)", nil},
	}
	for _, st := range stmts {
		if err := s.Exec(ctx, st.q, st.args...); err != nil {
			t.Fatalf("%s: %v", st.q, err)
		}
	}
}

// Copy moves every row both ways, the change sequence continues on the
// target, and a second copy into the now full target is refused.
func TestCopy(t *testing.T) {
	for _, tc := range []struct{ from, to storage.Dialect }{
		{storage.SQLite, storage.Postgres},
		{storage.Postgres, storage.SQLite},
	} {
		t.Run(string(tc.from)+"-to-"+string(tc.to), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			from, to := storagetest.Open(t, tc.from), storagetest.Open(t, tc.to)
			fill(t, from)
			counts, err := storage.Copy(ctx, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(counts) != len(storage.Tables()) {
				t.Fatalf("%d counts for %d tables", len(counts), len(storage.Tables()))
			}
			for _, c := range counts {
				if c.From == 0 || c.From != c.To {
					t.Errorf("%s: %d rows in source, %d in target", c.Table, c.From, c.To)
				}
			}
			for _, table := range storage.Tables() {
				a, err := from.Dump(ctx, table)
				if err != nil {
					t.Fatal(err)
				}
				b, err := to.Dump(ctx, table)
				if err != nil {
					t.Fatal(err)
				}
				if key := func(r []string) string { return strings.Join(r, "\x00") }; !slices.EqualFunc(sorted(a, key), sorted(b, key), slices.Equal) {
					t.Errorf("%s differs:\nsource %q\ntarget %q", table, a, b)
				}
			}
			// The next change continues the copied sequence.
			id, err := to.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
				return tx.Changed(ctx, "hostname", "h1")
			})
			if err != nil || id != 42 {
				t.Fatalf("next change id %d, %v; want 42", id, err)
			}
			if _, err := storage.Copy(ctx, from, to); !errors.Is(err, storage.ErrTargetNotEmpty) {
				t.Fatalf("second copy: %v, want ErrTargetNotEmpty", err)
			}
		})
	}
}

func sorted(rows [][]string, key func([]string) string) [][]string {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(key(a), key(b)) })
	return out
}

// Backup of a SQLite store opens as a store holding the same rows.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	s := storagetest.Open(t, storage.SQLite)
	fill(t, s)
	file := storagetest.DSN(t, storage.SQLite)
	if err := s.Backup(ctx, file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup's mode is %v (%v), want 0600: it holds what the store holds", fi.Mode().Perm(), err)
	}
	if err := s.Backup(ctx, file); err == nil {
		t.Fatal("a second backup overwrote the first")
	}
	b, err := storage.Open(ctx, storage.SQLite, file)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := storage.Counts(ctx, s, b); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.Open(t, storage.Postgres).Backup(ctx, "x"); err == nil {
		t.Fatal("Backup of a PostgreSQL store did not refuse")
	}
}
