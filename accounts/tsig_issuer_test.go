package accounts_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// tsigService is a profile 2 service on a fresh store of d that issues
// TSIG keys.
func tsigService(t *testing.T, d storage.Dialect) (*storage.Store, *accounts.Service) {
	t.Helper()
	store := storagetest.Open(t, d)
	k := make(seal.Key, 32)
	rand.Read(k)
	return store, accounts.New(store, 2, nil).WithTSIG(k, accounts.NewKeyring(store, k))
}

// liveIssuedBy counts the rows of account's TSIG keys that are not revoked
// and were issued by API key keyID.
func liveIssuedBy(t *testing.T, store *storage.Store, account, keyID string) int {
	t.Helper()
	ks, err := store.Reader().TSIGKeys(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range ks {
		if k.IssuedBy == keyID {
			n++
		}
	}
	return n
}

// Creates racing their issuer's revocation leave no live key: one that
// commits first is revoked with the issuer, one that comes after finds the
// issuer revoked (its row read under a lock the revocation's update takes)
// and is refused as the revoked key's requests are. Before the lock, 2
// rounds in 3 left a live key on PostgreSQL; on SQLite every create queued
// behind the revocation did.
func TestTSIGCreatesRacingIssuerRevocation(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, svc := tsigService(t, d)
			const rounds, creates = 30, 8
			made, refused := 0, 0
			for round := range rounds {
				// A fresh team each round: its caps and its rate of issues
				// (20 an hour) are its own.
				name, plan := fmt.Sprintf("team %d", round), "team"
				a, err := svc.Create(ctx, accounts.Input{Name: &name, Plan: &plan})
				if err != nil {
					t.Fatal(err)
				}
				bearer, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{Operator: true})
				if err != nil {
					t.Fatal(err)
				}
				by := &access.Principal{AccountID: a.ID, KeyID: bearer.Key.ID, Scopes: bearer.Scopes}

				var wg sync.WaitGroup
				begin := make(chan struct{})
				done := make(chan struct{}, creates)
				errs := make([]error, creates)
				for i := range creates {
					wg.Go(func() {
						<-begin
						_, errs[i] = svc.CreateTSIGKey(ctx, a.ID, by, accounts.TSIGInput{})
						done <- struct{}{}
					})
				}
				var revoked error
				wg.Go(func() {
					<-begin
					for range round % 4 { // land among the creates, not always first
						<-done
					}
					revoked = svc.RevokeKey(ctx, bearer.Key.ID)
				})
				close(begin)
				wg.Wait()
				if revoked != nil {
					t.Fatalf("round %d: revoking the issuer: %v", round, revoked)
				}
				for i, err := range errs {
					switch {
					case err == nil:
						made++
					case isCode(err, apierror.CodeUnauthorized):
						refused++
					default:
						t.Fatalf("round %d, create %d: %v", round, i, err)
					}
				}
				if n := liveIssuedBy(t, store, a.ID, bearer.Key.ID); n != 0 {
					t.Fatalf("round %d: %d TSIG keys issued by the revoked key %s are live", round, n, bearer.Key.ID)
				}
			}
			t.Logf("%d rounds: %d creates answered, %d refused (issuer revoked)", rounds, made, refused)
		})
	}
}

// A key that writes nothing cannot issue a TSIG key (a key for DNS UPDATE,
// each new one a reload of every node and one of the team's issues an
// hour): 403, and no row.
func TestTSIGIssuerNeedsWriteScope(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, svc := tsigService(t, d)
			name, plan := "team", "team"
			a, err := svc.Create(ctx, accounts.Input{Name: &name, Plan: &plan})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name   string
				scopes []access.Scope
				ask    []access.Scope
				code   string
			}{
				{"read only", []access.Scope{{Scope: access.HostnamesRead}}, nil, apierror.CodeForbidden},
				{"read only, asking for read", []access.Scope{{Scope: access.HostnamesRead}},
					[]access.Scope{{Scope: access.HostnamesRead}}, apierror.CodeForbidden},
				{"hostnames:write", []access.Scope{{Scope: access.HostnamesWrite}}, nil, ""},
				{"dns01:write", []access.Scope{{Scope: access.HostnamesRead}, {Scope: access.DNS01Write}}, nil, ""},
			} {
				k, err := svc.CreateKey(ctx, a.ID, accounts.KeyInput{Scopes: tc.scopes, Operator: true})
				if err != nil {
					t.Fatal(err)
				}
				by := &access.Principal{AccountID: a.ID, KeyID: k.Key.ID, Scopes: k.Scopes}
				_, err = svc.CreateTSIGKey(ctx, a.ID, by, accounts.TSIGInput{Scopes: tc.ask})
				if tc.code == "" && err != nil || tc.code != "" && !isCode(err, tc.code) {
					t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
				}
				want := 0
				if tc.code == "" {
					want = 1
				}
				if n := liveIssuedBy(t, store, a.ID, k.Key.ID); n != want {
					t.Errorf("%s: %d rows, want %d", tc.name, n, want)
				}
			}
		})
	}
}
