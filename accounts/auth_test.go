package accounts_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

func code(err error) string {
	if p, ok := apierror.As(err); ok {
		return p.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// newAccount opens a fresh store of dialect d with an authenticator and
// one free account.
func newAccount(t *testing.T, d storage.Dialect) (*storage.Store, *accounts.Authenticator, *accounts.Service, *storage.Account) {
	t.Helper()
	store := storagetest.Open(t, d)
	auth := accounts.NewAuthenticator(store)
	svc := accounts.New(store, 1, auth)
	name, plan := "a", "free"
	a, err := svc.Create(context.Background(), accounts.Input{Name: &name, Plan: &plan})
	if err != nil {
		t.Fatal(err)
	}
	return store, auth, svc, a
}

func TestAuthenticate(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, auth, svc, a := newAccount(t, d)
			k, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{})
			if err != nil {
				t.Fatal(err)
			}
			soon := time.Now().Add(300 * time.Millisecond)
			short, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{ExpiresAt: &soon})
			if err != nil {
				t.Fatal(err)
			}

			tests := []struct {
				token string
				code  string
			}{
				{k.Token, ""},
				{"", apierror.CodeUnauthorized},
				{"Bearer " + k.Token, apierror.CodeUnauthorized}, // a credential, not a header
				{k.Token + "x", apierror.CodeUnauthorized},
				{"svc_nokey_secret", apierror.CodeUnauthorized},
			}
			for _, tc := range tests {
				p, err := auth.Authenticate(ctx, tc.token)
				if code(err) != tc.code {
					t.Errorf("Authenticate(%q) = %v, want code %q", tc.token, err, tc.code)
				}
				if err == nil && (p.AccountID != a.ID || p.KeyID != k.Key.ID || len(p.Scopes) != 3) {
					t.Errorf("principal %+v", p)
				}
			}
			if _, err := auth.Authenticate(ctx, short.Token); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(soon) + 10*time.Millisecond)
			if _, err := auth.Authenticate(ctx, short.Token); code(err) != apierror.CodeKeyExpired {
				t.Fatalf("expired key: %v", err)
			}
			// Revocation works at once on this node, cache or not.
			if err := svc.RevokeKey(ctx, k.Key.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := auth.Authenticate(ctx, k.Token); code(err) != apierror.CodeUnauthorized {
				t.Fatalf("revoked key: %v", err)
			}
			// A database that is gone is not "unauthorized".
			store.Close()
			fresh := accounts.NewAuthenticator(store)
			if _, err := fresh.Authenticate(ctx, short.Token); err == nil || code(err) == apierror.CodeUnauthorized {
				t.Fatalf("closed store: %v", err)
			} else if !errors.Is(err, storage.ErrUnavailable) {
				t.Logf("closed store error: %v", err)
			}
		})
	}
}

// BenchmarkAuthenticate measures a request's authentication with the key in
// the node's cache: parse, one map load, one SHA-256 and a constant-time compare.
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	store := storagetest.Open(b, storage.SQLite)
	auth := accounts.NewAuthenticator(store)
	svc := accounts.New(store, 1, auth)
	name, plan := "a", "free"
	a, _ := svc.Create(ctx, accounts.Input{Name: &name, Plan: &plan})
	k, _ := svc.CreateKey(ctx, a.ID, accounts.KeyInput{})
	header := k.Token
	b.ReportAllocs()
	for b.Loop() {
		if _, err := auth.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnknownKeyRemembered: an id that matches no key is answered from the
// node's memory the next time, and a key that appears with that id later is
// accepted as soon as the feed brings its change.
func TestUnknownKeyRemembered(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, auth, _, a := newAccount(t, d)
			id, secret, token := apikey.New()
			if _, err := auth.Authenticate(ctx, token); code(err) != apierror.CodeUnauthorized {
				t.Fatalf("unknown key: %v", err)
			}
			// Written behind the authenticator's back (as another node would):
			// until the change arrives, the remembered miss stands.
			_, err := store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
				k := &storage.APIKey{ID: id, AccountID: a.ID, SecretHash: apikey.Hash(secret), Scopes: "[]", CreatedAt: time.Now().UnixMilli()}
				if err := tx.InsertKey(ctx, k); err != nil {
					return err
				}
				return tx.Changed(ctx, storage.KindKey, id)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := auth.Authenticate(ctx, token); code(err) != apierror.CodeUnauthorized {
				t.Fatalf("remembered miss: %v", err)
			}
			if err := auth.Apply(ctx, store.Reader(), []storage.Change{{Kind: storage.KindKey, Ref: id}}); err != nil {
				t.Fatal(err)
			}
			if _, err := auth.Authenticate(ctx, token); err != nil {
				t.Fatalf("key after its change: %v", err)
			}
		})
	}
}

// BenchmarkAuthenticateUnknown measures a made-up key after its first miss:
// no SQL, one hash of the id.
func BenchmarkAuthenticateUnknown(b *testing.B) {
	ctx := context.Background()
	auth := accounts.NewAuthenticator(storagetest.Open(b, storage.SQLite))
	_, _, token := apikey.New()
	header := token
	b.ReportAllocs()
	for b.Loop() {
		if _, err := auth.Authenticate(ctx, header); code(err) != apierror.CodeUnauthorized {
			b.Fatal(err)
		}
	}
}
