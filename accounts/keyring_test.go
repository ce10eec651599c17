package accounts_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// The keyring follows the store: a key issued is in it once its change is
// applied, with its principal; a revoked key and a suspended team's keys
// sign nothing, at once on this node; a node with another encryption key
// holds none.
func TestKeyring(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, ring, svc, a := teamRing(t, d)
			if err := ring.Load(ctx, store.Reader()); err != nil {
				t.Fatal(err)
			}
			changes := 0
			ring.OnChange(func() { changes++ })
			nk, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{Scopes: []access.Scope{{Scope: access.DNS01Write}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); !errors.Is(err, accounts.ErrUnknownTSIGKey) {
				t.Fatalf("before its change is applied: %v", err)
			}
			if err := ring.Apply(ctx, store.Reader(), []storage.Change{{Kind: storage.KindTSIGKey, Ref: nk.Key.ID}}); err != nil {
				t.Fatal(err)
			}
			if got := ring.Secrets()[nk.Key.KeyName+"."]; got != nk.Secret || changes != 1 {
				t.Fatalf("secret %q (want %q), %d changes", got, nk.Secret, changes)
			}
			if _, err := ring.Principal(ctx, nk.Key.KeyName, "hmac-sha512."); !errors.Is(err, accounts.ErrUnknownTSIGKey) {
				t.Fatalf("signed with another algorithm than the key's: %v", err)
			}
			p, err := ring.Principal(ctx, nk.Key.KeyName+".", "hmac-sha256.")
			if err != nil || p.AccountID != a.ID || p.KeyID != nk.Key.ID || len(p.Scopes) != 1 || p.Credential != "TSIG key" {
				t.Fatalf("principal %+v, %v", p, err)
			}

			suspended := "suspended"
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{Status: &suspended}); err != nil {
				t.Fatal(err)
			}
			if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); !errors.Is(err, accounts.ErrClosedTeam) {
				t.Fatalf("a suspended team's key: %v", err)
			}
			if err := ring.Check(nk.Key.KeyName+".", "hmac-sha256."); !errors.Is(err, accounts.ErrClosedTeam) {
				t.Fatalf("a suspended team's key, checked: %v", err)
			}
			active := "active"
			if _, err := svc.Patch(ctx, a.ID, accounts.Input{Status: &active}); err != nil {
				t.Fatal(err)
			}
			if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); err != nil {
				t.Fatalf("restored: %v", err)
			}

			// Another node, with another key, cannot open the secret.
			other := make(seal.Key, 32)
			rand.Read(other)
			elsewhere := accounts.NewKeyring(store, other)
			if err := elsewhere.Load(ctx, store.Reader()); err != nil || len(elsewhere.Secrets()) != 0 {
				t.Fatalf("a ring with another encryption key holds %v (%v)", elsewhere.Secrets(), err)
			}

			if err := svc.RevokeTSIGKey(ctx, a.ID, nil, nk.Key.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); !errors.Is(err, accounts.ErrUnknownTSIGKey) || changes != 2 {
				t.Fatalf("revoked: %v, %d changes", err, changes)
			}
			if err := ring.Load(ctx, store.Reader()); err != nil || len(ring.Secrets()) != 0 {
				t.Fatalf("reloaded after the revocation: %v (%v)", ring.Secrets(), err)
			}
		})
	}
}

func isCode(err error, code string) bool {
	p, ok := apierror.As(err)
	return ok && p.Code == code
}

// What a TSIG key create refuses, each with its code, and nothing stored.
func TestCreateTSIGKeyRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := storagetest.Open(t, storage.SQLite)
	k := make(seal.Key, 32)
	rand.Read(k)
	svc := accounts.New(store, 2, nil).WithTSIG(k, nil)
	name, plan := "team", "team"
	a, err := svc.Create(ctx, accounts.Input{Name: &name, Plan: &plan})
	if err != nil {
		t.Fatal(err)
	}
	// It writes (dns01:write): a key that only reads issues no TSIG key.
	readOnly, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{Scopes: []access.Scope{{Scope: access.HostnamesRead}, {Scope: access.DNS01Write}}})
	if err != nil {
		t.Fatal(err)
	}
	narrow := &access.Principal{AccountID: a.ID, KeyID: readOnly.Key.ID, Scopes: readOnly.Scopes}
	long := string(make([]byte, 201))
	for _, tc := range []struct {
		name string
		svc  *accounts.Service
		by   *access.Principal
		in   accounts.TSIGInput
		code string
	}{
		{"algorithm", svc, nil, accounts.TSIGInput{Algorithm: "hmac-md5"}, apierror.CodeBadRequest},
		{"name", svc, nil, accounts.TSIGInput{Name: long}, apierror.CodeBadRequest},
		{"scope", svc, nil, accounts.TSIGInput{Scopes: []access.Scope{{Scope: "zones:write"}}}, apierror.CodeBadRequest},
		{"beyond the bearer", svc, narrow, accounts.TSIGInput{Scopes: []access.Scope{{Scope: access.HostnamesWrite}}}, apierror.CodeForbidden},
		{"no encryption key", accounts.New(store, 2, nil), nil, accounts.TSIGInput{}, apierror.CodeNotImplemented},
	} {
		if _, err := tc.svc.CreateTSIGKey(ctx, a.ID, tc.by, tc.in); !isCode(err, tc.code) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// A bearer key's own scopes are what a key it issues gets by default.
	nk, err := svc.CreateTSIGKey(ctx, a.ID, narrow, accounts.TSIGInput{})
	if err != nil || len(nk.Scopes) != 2 || nk.Scopes[0].Scope != access.HostnamesRead || nk.Scopes[1].Scope != access.DNS01Write {
		t.Fatalf("default scopes for a bearer: %+v, %v", nk, err)
	}
	for range accounts.MaxTSIGKeys - 1 {
		if _, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{}); !isCode(err, apierror.CodeConflict) {
		t.Fatalf("key %d: %v, want CONFLICT", accounts.MaxTSIGKeys+1, err)
	}
	if ks, _ := svc.TSIGKeys(ctx, a.ID, nil); len(ks) != accounts.MaxTSIGKeys {
		t.Fatalf("%d keys stored", len(ks))
	}
	if ks, _ := svc.TSIGKeys(ctx, a.ID, narrow); len(ks) != 1 {
		t.Fatalf("the narrow bearer sees %d keys, want its own one", len(ks))
	}
	// Revoking makes room, but not for more than 20 issued an hour: each
	// new key reloads every node's DNS servers.
	ks, _ := svc.TSIGKeys(ctx, a.ID, nil)
	for _, k := range ks {
		if err := svc.RevokeTSIGKey(ctx, a.ID, nil, k.ID); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{}); err != nil {
			t.Fatalf("key %d after the revocations: %v", i, err)
		}
	}
	if ks, _ := svc.TSIGKeys(ctx, a.ID, nil); len(ks) > 0 {
		if err := svc.RevokeTSIGKey(ctx, a.ID, nil, ks[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{}); !isCode(err, apierror.CodeRateLimited) {
		t.Fatalf("the 21st key issued within an hour: %v, want RATE_LIMITED", err)
	}
}

// A TSIG key a bearer key issues lives no longer than that key: it expires
// with it and is revoked with it.
func TestTSIGKeyFollowsItsIssuer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, ring, svc, a := teamRing(t, storage.SQLite)
	soon := time.Now().Add(time.Hour)
	bearer, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{ExpiresAt: &soon})
	if err != nil {
		t.Fatal(err)
	}
	by := &access.Principal{AccountID: a.ID, KeyID: bearer.Key.ID, Scopes: access.All()}
	nk, err := svc.CreateTSIGKey(ctx, a.ID, by, accounts.TSIGInput{})
	if err != nil {
		t.Fatal(err)
	}
	if nk.Key.IssuedBy != bearer.Key.ID || nk.Key.ExpiresAt != bearer.Key.ExpiresAt {
		t.Fatalf("issued by %q, expires %d; want %q, %d", nk.Key.IssuedBy, nk.Key.ExpiresAt, bearer.Key.ID, bearer.Key.ExpiresAt)
	}
	if err := ring.Load(ctx, store.Reader()); err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); err != nil {
		t.Fatalf("before the bearer's end: %v", err)
	}
	if err := svc.RevokeKey(ctx, bearer.Key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Principal(ctx, nk.Key.KeyName, ""); !errors.Is(err, accounts.ErrUnknownTSIGKey) {
		t.Fatalf("after the bearer's revocation: %v", err)
	}
	if ks, _ := svc.TSIGKeys(ctx, a.ID, nil); len(ks) != 0 {
		t.Fatalf("%d TSIG keys left after their issuer's revocation", len(ks))
	}
}

// BenchmarkKeyringCheck is what the key gate adds to every message signed
// with a store key: the key's state, read from the ring (no SQL).
func BenchmarkKeyringCheck(b *testing.B) {
	ctx := context.Background()
	store, ring, svc, a := teamRing(b, storage.SQLite)
	nk, err := svc.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{})
	if err != nil {
		b.Fatal(err)
	}
	if err := ring.Load(ctx, store.Reader()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ring.Check(nk.Key.KeyName+".", "hmac-sha256."); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// teamRing is a store of dialect d with a keyring that opens TSIG secrets,
// the accounts service that issues them ([P2]), and one team account.
func teamRing(tb testing.TB, d storage.Dialect) (*storage.Store, *accounts.Keyring, *accounts.Service, *storage.Account) {
	tb.Helper()
	store := storagetest.Open(tb, d)
	k := make(seal.Key, 32)
	rand.Read(k)
	ring := accounts.NewKeyring(store, k)
	svc := accounts.New(store, 2, nil).WithTSIG(k, ring)
	name, plan := "team", "team"
	a, err := svc.Create(context.Background(), accounts.Input{Name: &name, Plan: &plan})
	if err != nil {
		tb.Fatal(err)
	}
	return store, ring, svc, a
}
