package accounts_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/problem"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

func code(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestAuthenticate(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := storagetest.Open(t, d)
			auth := accounts.NewAuthenticator(store)
			svc := accounts.New(store, 1, auth)
			name, plan := "a", "free"
			a, err := svc.Create(ctx, accounts.Input{Name: &name, Plan: &plan})
			if err != nil {
				t.Fatal(err)
			}
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
				header string
				code   string
			}{
				{"Bearer " + k.Token, ""},
				{"bearer " + k.Token, ""},
				{"Bearer  " + k.Token + " ", ""},
				{"", problem.CodeUnauthorized},
				{"Bearer", problem.CodeUnauthorized},
				{"Basic " + k.Token, problem.CodeUnauthorized},
				{"Bearer " + k.Token + "x", problem.CodeUnauthorized},
				{"Bearer svc_nokey_secret", problem.CodeUnauthorized},
			}
			for _, tc := range tests {
				p, err := auth.Authenticate(ctx, tc.header)
				if code(err) != tc.code {
					t.Errorf("Authenticate(%q) = %v, want code %q", tc.header, err, tc.code)
				}
				if err == nil && (p.AccountID != a.ID || p.KeyID != k.Key.ID || len(p.Scopes) != 3) {
					t.Errorf("principal %+v", p)
				}
			}
			if _, err := auth.Authenticate(ctx, "Bearer "+short.Token); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(soon) + 10*time.Millisecond)
			if _, err := auth.Authenticate(ctx, "Bearer "+short.Token); code(err) != problem.CodeKeyExpired {
				t.Fatalf("expired key: %v", err)
			}
			// Revocation works at once on this node, cache or not.
			if err := svc.RevokeKey(ctx, k.Key.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := auth.Authenticate(ctx, "Bearer "+k.Token); code(err) != problem.CodeUnauthorized {
				t.Fatalf("revoked key: %v", err)
			}
			// A database that is gone is not "unauthorized".
			store.Close()
			fresh := accounts.NewAuthenticator(store)
			if _, err := fresh.Authenticate(ctx, "Bearer "+short.Token); err == nil || code(err) == problem.CodeUnauthorized {
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
	header := "Bearer " + k.Token
	b.ReportAllocs()
	for b.Loop() {
		if _, err := auth.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}
