package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// eachDialect runs fn as a parallel subtest per dialect.
func eachDialect(t *testing.T, fn func(t *testing.T, d storage.Dialect)) {
	t.Helper()
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// eachStore runs fn with a fresh, empty store per dialect.
func eachStore(t *testing.T, fn func(t *testing.T, s *storage.Store)) {
	t.Helper()
	eachDialect(t, func(t *testing.T, d storage.Dialect) { fn(t, storagetest.Open(t, d)) })
}

// waitFor polls cond every 10ms until it holds, failing the test after 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// write runs fn in a transaction and fails the test on error.
func write(t testing.TB, s *storage.Store, fn func(ctx context.Context, tx *storage.Tx) error) int64 {
	t.Helper()
	id, err := s.Write(t.Context(), fn)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return id
}

const (
	acct  = "acct-1"
	other = "acct-2"
	dom   = "dom-1"
)

// seed inserts two accounts and one domain.
func seed(t testing.TB, s *storage.Store) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx *storage.Tx) error {
		for _, id := range []string{acct, other} {
			if err := tx.InsertAccount(ctx, &storage.Account{ID: id, Name: id, Plan: "free", CreatedAt: 1}); err != nil {
				return err
			}
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: dom, Name: "example.test", Status: storage.DomainActive, CreatedAt: 1})
	})
}

func host(id, account, label, status string, expires, created int64) *storage.Hostname {
	return &storage.Hostname{ID: id, AccountID: account, DomainID: dom, Label: label, Name: label + ".example.test",
		IP: "192.0.2.1", Status: status, ExpiresAt: expires, CreatedAt: created, UpdatedAt: created}
}

func insertHosts(t testing.TB, s *storage.Store, hs ...*storage.Hostname) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx *storage.Tx) error {
		for _, h := range hs {
			if err := tx.InsertHostname(ctx, h); err != nil {
				return fmt.Errorf("%s: %w", h.ID, err)
			}
		}
		return nil
	})
}

func TestOpenMigratesIdempotently(t *testing.T) {
	eachDialect(t, func(t *testing.T, d storage.Dialect) {
		ctx := t.Context()
		dsn := storagetest.DSN(t, d)
		// Several nodes starting at once on an empty database migrate it once.
		var wg sync.WaitGroup
		stores := make([]*storage.Store, 4)
		errs := make([]error, len(stores))
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = storage.Open(ctx, d, dsn) })
		}
		wg.Wait()
		for i, s := range stores {
			if errs[i] != nil {
				t.Fatalf("concurrent Open %d: %v", i, errs[i])
			}
			t.Cleanup(func() { s.Close() })
		}
		seed(t, stores[0])

		s, err := storage.Open(ctx, d, dsn)
		if err != nil {
			t.Fatalf("second Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		if _, err := s.Reader().Account(ctx, acct); err != nil {
			t.Errorf("data lost on reopen: %v", err)
		}
		db, err := sql.Open(string(d), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Each version applied exactly once, in a row of its own.
		var n, distinct, top int
		err = db.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT version), max(version) FROM schema_migrations").Scan(&n, &distinct, &top)
		if err != nil || n != distinct || n != top {
			t.Errorf("schema_migrations: %d rows, %d versions, newest %d, %v", n, distinct, top, err)
		}
	})
}

func TestRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		limit := 7
		a := &storage.Account{ID: acct, Name: "Team", Plan: "pro", Cap: &limit, Billing: true, CreatedAt: 10}
		k := &storage.APIKey{ID: "key-1", AccountID: acct, Name: "ci", SecretHash: "h", Scopes: `[{"scope":"read"}]`, ExpiresAt: 99, CreatedAt: 11}
		pool := &storage.Domain{ID: "dom-pool", Name: "pool.test", Status: storage.DomainActive, CreatedAt: 12}
		own := &storage.Domain{ID: dom, Name: "example.test", AccountID: acct, Status: storage.DomainProvisioning, CAA: `{"issue":["ca.test"]}`, DNSSEC: true, CreatedAt: 13}
		h := host("host-1", acct, "www", storage.StatusLive, 100, 14)
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			return errors.Join(tx.InsertAccount(ctx, a), tx.InsertKey(ctx, k), tx.InsertDomain(ctx, pool),
				tx.InsertDomain(ctx, own), tx.InsertHostname(ctx, h))
		})

		q := s.Reader()
		check := func(name string, got any, err error, want any) {
			t.Helper()
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %+v\nwant %+v", name, got, want)
			}
		}
		gotA, err := q.Account(ctx, acct)
		a.ActiveHostnames = 1 // h, counted by the triggers
		check("Account", gotA, err, a)
		gotK, err := q.Key(ctx, k.ID)
		check("Key", gotK, err, k)
		gotKs, err := q.Keys(ctx, acct)
		check("Keys", gotKs, err, []storage.APIKey{*k})
		gotD, err := q.Domain(ctx, own.ID)
		check("Domain", gotD, err, own)
		gotDs, err := q.Domains(ctx)
		check("Domains", gotDs, err, []storage.Domain{*pool, *own})
		gotH, err := q.Hostname(ctx, h.ID)
		check("Hostname", gotH, err, h)
		gotHs, err := q.HostnamesByID(ctx, []string{h.ID, "missing"})
		check("HostnamesByID", gotHs, err, []storage.Hostname{*h})
		held, by, retired, err := q.LabelUse(ctx, dom, "www")
		if err != nil || !held || retired || by != "" {
			t.Errorf("LabelUse(www) = %v %q %v %v; want held, not retired", held, by, retired, err)
		}

		// Updates write every column.
		a.Cap, a.Billing, a.ActiveHostnames = nil, false, 0 // h released: no longer counted
		h.Status, h.ReleasedAt = storage.StatusReleased, 20
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			return errors.Join(tx.UpdateAccount(ctx, a), tx.UpdateHostname(ctx, h))
		})
		gotA, err = q.Account(ctx, acct)
		check("Account after update", gotA, err, a)
		gotH, err = q.Hostname(ctx, h.ID)
		check("Hostname after update", gotH, err, h)
	})
}

func TestUniqueViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(ctx context.Context, tx *storage.Tx) error
		want error
	}{
		{"domain name taken", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertDomain(ctx, &storage.Domain{ID: "dom-2", Name: "example.test", Status: storage.DomainActive})
		}, storage.ErrConflict},
		{"account id taken", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertAccount(ctx, &storage.Account{ID: acct, Name: "x", Plan: "free"})
		}, storage.ErrConflict},
		{"live label taken", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertHostname(ctx, host("h-2", other, "www", storage.StatusLive, 0, 2))
		}, storage.ErrConflict},
		{"pending label taken", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertHostname(ctx, host("h-2", other, "www", storage.StatusPending, 0, 2))
		}, storage.ErrConflict},
		{"released label reused", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertHostname(ctx, host("h-2", other, "old", storage.StatusLive, 0, 2))
		}, nil},
		{"released label reused as released", func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertHostname(ctx, host("h-2", other, "old", storage.StatusReleased, 0, 2))
		}, nil},
		{"domain if missing", func(ctx context.Context, tx *storage.Tx) error {
			ok, err := tx.InsertDomainIfMissing(ctx, &storage.Domain{ID: "dom-2", Name: "example.test", Status: storage.DomainActive})
			if err == nil && ok {
				err = errors.New("InsertDomainIfMissing inserted a duplicate")
			}
			return err
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				seed(t, s)
				insertHosts(t, s, host("h-1", acct, "www", storage.StatusLive, 0, 1),
					host("h-old", acct, "old", storage.StatusReleased, 0, 1))
				_, err := s.Write(t.Context(), tc.fn)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		})
	}
}

func TestNotFound(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		ctx, q := t.Context(), s.Reader()
		tests := map[string]func() error{
			"Account":     func() error { _, err := q.Account(ctx, "nope"); return err },
			"LockAccount": func() error { _, err := q.LockAccount(ctx, "nope"); return err },
			"Key":         func() error { _, err := q.Key(ctx, "nope"); return err },
			"Domain":      func() error { _, err := q.Domain(ctx, "nope"); return err },
			"Hostname":    func() error { _, err := q.Hostname(ctx, "nope"); return err },
			"RevokeKey": func() error {
				_, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.RevokeKey(ctx, "nope", 1) })
				return err
			},
		}
		for name, fn := range tests {
			if err := fn(); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s: err = %v, want ErrNotFound", name, err)
			}
		}
	})
}

func TestWriteRollsBack(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		var commits int
		s.OnCommit(func(int64) { commits++ })
		boom := errors.New("boom")
		id, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
			err := errors.Join(
				tx.InsertAccount(ctx, &storage.Account{ID: acct, Name: "a", Plan: "free"}),
				tx.InsertDomain(ctx, &storage.Domain{ID: dom, Name: "example.test", Status: storage.DomainActive}),
				tx.InsertHostname(ctx, host("h-1", acct, "www", storage.StatusLive, 0, 1)),
				tx.Changed(ctx, storage.KindHostname, "h-1"),
				tx.Changed(ctx, storage.KindDomain, dom),
			)
			if err != nil {
				return err
			}
			if _, err := tx.Hostname(ctx, "h-1"); err != nil { // visible inside the transaction
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || id != 0 {
			t.Fatalf("Write = %d, %v; want 0, boom", id, err)
		}
		q := s.Reader()
		for name, err := range map[string]error{
			"account":  second(q.Account(ctx, acct)),
			"domain":   second(q.Domain(ctx, dom)),
			"hostname": second(q.Hostname(ctx, "h-1")),
		} {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s after rollback: err = %v, want ErrNotFound", name, err)
			}
		}
		if cs, err := q.ChangesAfter(ctx, 0, nil, 100); err != nil || len(cs) != 0 {
			t.Errorf("changes after rollback = %v, %v; want none", cs, err)
		}
		if last, err := q.LastChange(ctx); err != nil || last != 0 {
			t.Errorf("LastChange = %d, %v; want 0", last, err)
		}
		if commits != 0 {
			t.Errorf("OnCommit ran %d times for a rolled back write", commits)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func TestChanged(t *testing.T) {
	type ch struct{ kind, ref string }
	tests := []struct {
		name  string
		calls []ch
		want  []ch // rows appended, in order
	}{
		{"nothing changed", nil, nil},
		{"one", []ch{{storage.KindHostname, "a"}}, []ch{{storage.KindHostname, "a"}}},
		{"same object twice", []ch{{storage.KindHostname, "a"}, {storage.KindHostname, "a"}}, []ch{{storage.KindHostname, "a"}}},
		{"same ref, other kind", []ch{{storage.KindHostname, "a"}, {storage.KindKey, "a"}},
			[]ch{{storage.KindHostname, "a"}, {storage.KindKey, "a"}}},
		{"mixed", []ch{{storage.KindHostname, "a"}, {storage.KindHostname, "b"}, {storage.KindHostname, "a"}, {storage.KindDomain, "d"}, {storage.KindHostname, "b"}},
			[]ch{{storage.KindHostname, "a"}, {storage.KindHostname, "b"}, {storage.KindDomain, "d"}}},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx, q := t.Context(), s.Reader()
		var commits int
		s.OnCommit(func(int64) { commits++ })
		for round := range 2 { // the same objects change again in a later transaction
			for _, tc := range tests {
				before, err := q.LastChange(ctx)
				if err != nil {
					t.Fatal(err)
				}
				id := write(t, s, func(ctx context.Context, tx *storage.Tx) error {
					for _, c := range tc.calls {
						if err := tx.Changed(ctx, c.kind, c.ref); err != nil {
							return err
						}
					}
					return nil
				})
				rows, err := q.ChangesAfter(ctx, before, nil, 100)
				if err != nil {
					t.Fatal(err)
				}
				var got []ch
				for _, r := range rows {
					got = append(got, ch{r.Kind, r.Ref})
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("round %d, %s: rows = %v, want %v", round, tc.name, got, tc.want)
				}
				wantID := int64(0)
				if len(rows) > 0 {
					wantID = rows[len(rows)-1].ID
				}
				if id != wantID {
					t.Errorf("round %d, %s: Write returned %d, want %d", round, tc.name, id, wantID)
				}
			}
		}
		if want := 2 * (len(tests) - 1); commits != want {
			t.Errorf("OnCommit ran %d times, want %d (once per write that changed something)", commits, want)
		}
	})
}

func TestCountActive(t *testing.T) {
	const now = 1_000_000
	tests := []struct {
		h       *storage.Hostname
		counted bool
	}{
		{host("never", acct, "never", storage.StatusLive, 0, 1), true},
		{host("future", acct, "future", storage.StatusLive, now+1, 1), true},
		{host("past", acct, "past", storage.StatusLive, now-1, 1), false},
		{host("at-now", acct, "at-now", storage.StatusLive, now, 1), false},
		{host("pending", acct, "pending", storage.StatusPending, 0, 1), true},
		{host("released", acct, "released", storage.StatusReleased, 0, 1), false},
		{host("suspended", acct, "suspended", storage.StatusSuspended, 0, 1), false},
		{host("terminated", acct, "terminated", storage.StatusTerminated, 0, 1), false},
		{host("other", other, "other", storage.StatusLive, 0, 1), false},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		want := 0
		for _, tc := range tests {
			insertHosts(t, s, tc.h)
			if tc.counted {
				want++
			}
			if n, err := s.Reader().CountActive(t.Context(), acct, now); err != nil || n != want {
				t.Errorf("after %s: CountActive = %d, %v; want %d", tc.h.ID, n, err, want)
			}
		}
	})
}

func TestFindHostnames(t *testing.T) {
	tests := []struct {
		limit, skip int
		want        []string
	}{
		{100, 0, []string{"h5", "h4", "h3b", "h3a", "h2", "h1"}},
		{2, 0, []string{"h5", "h4"}},
		{2, 2, []string{"h3b", "h3a"}},
		{10, 5, []string{"h1"}},
		{10, 6, nil},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		insertHosts(t, s,
			host("h1", acct, "l1", storage.StatusLive, 0, 1),
			host("h3a", acct, "l3a", storage.StatusLive, 0, 3), // same created_at: id breaks the tie
			host("h2", acct, "l2", storage.StatusPending, 0, 2),
			host("h3b", acct, "l3b", storage.StatusLive, 1, 3), // expired, still listed
			host("h5", acct, "l5", storage.StatusLive, 0, 5),
			host("h4", acct, "l4", storage.StatusLive, 0, 4),
			host("gone", acct, "gone", storage.StatusReleased, 0, 9),
			host("theirs", other, "theirs", storage.StatusLive, 0, 9),
		)
		for _, tc := range tests {
			hs, err := s.Reader().FindHostnames(t.Context(), storage.Filter{AccountID: acct, Team: true, Exclude: []string{storage.StatusReleased}}, tc.limit, tc.skip)
			var got []string
			for _, h := range hs {
				got = append(got, h.ID)
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FindHostnames(limit %d, skip %d) = %v, %v; want %v", tc.limit, tc.skip, got, err, tc.want)
			}
		}
	})
}

func TestKeys(t *testing.T) {
	const now = 1_000_000
	key := func(id, account string, expires, revoked int64) *storage.APIKey {
		return &storage.APIKey{ID: id, AccountID: account, SecretHash: id, Scopes: "[]", ExpiresAt: expires, RevokedAt: revoked, CreatedAt: 1}
	}
	tests := []struct {
		k       *storage.APIKey
		counted bool
	}{
		{key("k-never", acct, 0, 0), true},
		{key("k-future", acct, now+1, 0), true},
		{key("k-past", acct, now-1, 0), false},
		{key("k-revoked", acct, 0, 5), false},
		{key("k-other", other, 0, 0), false},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx, q := t.Context(), s.Reader()
		seed(t, s)
		want := 0
		for _, tc := range tests {
			write(t, s, func(ctx context.Context, tx *storage.Tx) error { return tx.InsertKey(ctx, tc.k) })
			if tc.counted {
				want++
			}
			if n, err := q.CountKeys(ctx, acct, now); err != nil || n != want {
				t.Errorf("after %s: CountKeys = %d, %v; want %d", tc.k.ID, n, err, want)
			}
		}

		write(t, s, func(ctx context.Context, tx *storage.Tx) error { return tx.RevokeKey(ctx, "k-never", now) })
		if n, err := q.CountKeys(ctx, acct, now); err != nil || n != want-1 {
			t.Errorf("after RevokeKey: CountKeys = %d, %v; want %d", n, err, want-1)
		}
		if k, err := q.Key(ctx, "k-never"); err != nil || k.RevokedAt != now {
			t.Errorf("revoked key: RevokedAt = %d, %v; want %d", k.RevokedAt, err, now)
		}
		ks, err := q.Keys(ctx, acct)
		var ids []string
		for _, k := range ks {
			ids = append(ids, k.ID)
		}
		if want := []string{"k-future", "k-past"}; err != nil || !reflect.DeepEqual(ids, want) {
			t.Errorf("Keys = %v, %v; want %v (not revoked, oldest first)", ids, err, want)
		}
	})
}

func TestScanServable(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		seed(t, s)
		want := map[string]storage.Hostname{}
		var hs []*storage.Hostname
		for i := range 300 {
			status := []string{storage.StatusLive, storage.StatusPending, storage.StatusReleased}[i%3]
			h := host(fmt.Sprintf("h%03d", i), acct, fmt.Sprintf("l%03d", i), status, int64(i%2), int64(i))
			h.IP = fmt.Sprintf("2001:db8::%x", i)
			hs = append(hs, h)
			if status != storage.StatusReleased {
				want[h.ID] = storage.Hostname{ID: h.ID, Name: h.Name, IP: h.IP, Status: h.Status, ExpiresAt: h.ExpiresAt}
			}
		}
		insertHosts(t, s, hs...)

		got := map[string]storage.Hostname{}
		err := s.Reader().ScanServable(ctx, func(h *storage.Hostname) error {
			if _, dup := got[h.ID]; dup {
				return fmt.Errorf("%s seen twice", h.ID)
			}
			got[h.ID] = *h
			return nil
		})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ScanServable: %d rows, err %v; want %d rows", len(got), err, len(want))
		}

		stop := errors.New("stop")
		calls := 0
		err = s.Reader().ScanServable(ctx, func(*storage.Hostname) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("ScanServable with failing fn: err %v after %d calls; want stop after 1", err, calls)
		}
	})
}

func TestLabelUse(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		insertHosts(t, s, host("h1", acct, "live", storage.StatusLive, 0, 1), host("h2", other, "gone", storage.StatusLive, 0, 1))
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			_, err := tx.ReleaseHostnames(ctx, storage.HostnameSet{ID: "h2"}, 2)
			return err
		})
		tests := []struct {
			label         string
			held, retired bool
			by            string
		}{
			{"live", true, false, ""},
			{"gone", false, true, other},
			{"free", false, false, ""},
		}
		for _, tc := range tests {
			held, by, retired, err := s.Reader().LabelUse(t.Context(), dom, tc.label)
			if err != nil || held != tc.held || retired != tc.retired || by != tc.by {
				t.Errorf("LabelUse(%s) = %v %q %v %v; want %v %q %v", tc.label, held, by, retired, err, tc.held, tc.by, tc.retired)
			}
			// The pool domain read with the label tells the same.
			d, st, err := s.Reader().PoolDomainFor(t.Context(), tc.label, "")
			want := storage.LabelState{Held: tc.held, Retired: tc.retired, RetiredBy: tc.by}
			if err != nil || d.ID != dom || st != want {
				t.Errorf("PoolDomainFor(%s) = %v, %+v, %v; want %s, %+v", tc.label, d, st, err, dom, want)
			}
		}
		// The domain named except (acme-dns registrations' own) is left
		// out: the next pool domain answers, or none.
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertDomain(ctx, &storage.Domain{ID: "younger", Name: "younger.example", Status: storage.DomainActive, CreatedAt: 1 << 40})
		})
		older, _, err := s.Reader().PoolDomainFor(t.Context(), "free", "")
		if err != nil || older.ID != dom {
			t.Fatalf("PoolDomainFor = %v, %v; want the oldest, %s", older, err, dom)
		}
		if d, _, err := s.Reader().PoolDomainFor(t.Context(), "free", older.Name); err != nil || d.ID != "younger" {
			t.Errorf("PoolDomainFor except %s = %v, %v; want younger", older.Name, d, err)
		}
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			d, err := tx.Domain(ctx, "younger")
			if err != nil {
				return err
			}
			d.AccountID = acct
			return tx.UpdateDomain(ctx, d)
		})
		// A team's domain, or one being set up, is no pool domain.
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			d, err := tx.Domain(ctx, dom)
			if err != nil {
				return err
			}
			d.AccountID = acct
			return tx.UpdateDomain(ctx, d)
		})
		if _, _, err := s.Reader().PoolDomainFor(t.Context(), "free", ""); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("PoolDomainFor with no pool domain = %v, want ErrNotFound", err)
		}
	})
}
