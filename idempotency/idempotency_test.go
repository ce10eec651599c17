package idempotency_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/idempotency"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// creator is a create that writes one change row a call.
type creator struct {
	store *storage.Store
	calls atomic.Int64
	fail  error
}

func (c *creator) create(ctx context.Context) (idempotency.Answer, error) {
	n := c.calls.Add(1)
	if c.fail != nil {
		return idempotency.Answer{}, c.fail
	}
	_, err := c.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		return tx.Changed(ctx, storage.KindHostname, fmt.Sprintf("h%d", n))
	})
	return idempotency.Answer{Status: 201, Body: fmt.Appendf(nil, `{"id":"h%d"}`, n)}, err
}

func (c *creator) changes(t *testing.T) int64 {
	t.Helper()
	last, err := c.store.Reader().LastChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return last
}

func code(err error) string {
	if p, ok := apierror.As(err); ok {
		return p.Code
	}
	return fmt.Sprint(err)
}

func eachStore(t *testing.T, fn func(t *testing.T, s *storage.Store)) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, storagetest.Open(t, d))
		})
	}
}

func TestDo(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		svc := idempotency.New(s, nil)
		c := &creator{store: s}
		req := idempotency.Request{Scope: "account:a1", Key: "k-1", Request: []byte(`POST /x {"ip":"1"}`)}
		first, err := svc.Do(t.Context(), req, c.create)
		if err != nil || first.Status != 201 || first.Replayed {
			t.Fatalf("first: %+v, %v", first, err)
		}
		again, err := svc.Do(t.Context(), req, c.create)
		if err != nil || !again.Replayed || string(again.Body) != string(first.Body) || again.Status != 201 {
			t.Errorf("retry: %+v, %v; want the first answer replayed", again, err)
		}
		if c.calls.Load() != 1 || c.changes(t) != 1 {
			t.Errorf("create ran %d times, %d changes written; want once", c.calls.Load(), c.changes(t))
		}

		for _, tc := range []struct {
			name string
			req  idempotency.Request
			want string
		}{
			{"another body", idempotency.Request{Scope: "account:a1", Key: "k-1", Request: []byte(`POST /x {"ip":"2"}`)}, apierror.CodeConflict},
			{"empty key", idempotency.Request{Scope: "account:a1", Key: "", Request: req.Request}, apierror.CodeBadRequest},
			{"space in key", idempotency.Request{Scope: "account:a1", Key: "a b", Request: req.Request}, apierror.CodeBadRequest},
		} {
			if _, err := svc.Do(t.Context(), tc.req, c.create); code(err) != tc.want {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
			}
		}
		// Another scope's key of the same name is its own.
		other := req
		other.Scope = "account:a2"
		if a, err := svc.Do(t.Context(), other, c.create); err != nil || a.Replayed {
			t.Errorf("another account's key: %+v, %v; want a create of its own", a, err)
		}
		if c.calls.Load() != 2 {
			t.Errorf("create ran %d times, want 2", c.calls.Load())
		}
	})
}

// A create that fails keeps nothing: its retry runs again.
func TestDoFailedCreate(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		svc := idempotency.New(s, nil)
		c := &creator{store: s, fail: apierror.RateLimited("later")}
		req := idempotency.Request{Scope: "admin", Key: "k", Request: []byte("POST /x")}
		if _, err := svc.Do(t.Context(), req, c.create); code(err) != apierror.CodeRateLimited {
			t.Fatalf("failing create: %v", err)
		}
		c.fail = nil
		if a, err := svc.Do(t.Context(), req, c.create); err != nil || a.Replayed || c.calls.Load() != 2 {
			t.Errorf("retry after a failure: %+v, %v, %d calls; want it run again", a, err, c.calls.Load())
		}
	})
}

// An answer with a secret is kept sealed, or not at all without a key.
func TestDoSecret(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		key := make(seal.Key, 32)
		rand.Read(key)
		c := &creator{store: s}
		sealed := idempotency.New(s, key)
		req := idempotency.Request{Scope: "admin", Key: "sealed", Request: []byte("POST /keys"), Secret: true}
		first, err := sealed.Do(t.Context(), req, c.create)
		if err != nil {
			t.Fatal(err)
		}
		row, err := s.Reader().IdempotencyKey(t.Context(), "admin", "sealed", 0)
		if err != nil {
			t.Fatal(err)
		}
		// The body, not a fragment of it: a sealed blob's base64 may hold
		// "h1" by chance.
		if !row.Sealed || strings.Contains(row.Answer, string(first.Body)) || strings.Contains(row.Answer, `"id"`) {
			t.Errorf("the secret answer is stored in clear: %+v", row)
		}
		if a, err := sealed.Do(t.Context(), req, c.create); err != nil || !a.Replayed || string(a.Body) != string(first.Body) {
			t.Errorf("sealed retry: %+v, %v", a, err)
		}

		plain := idempotency.New(s, nil)
		req.Key = "plain"
		if _, err := plain.Do(t.Context(), req, c.create); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.Do(t.Context(), req, c.create); code(err) != apierror.CodeConflict {
			t.Errorf("a secret answer's retry without an encryption key: %v, want CONFLICT", err)
		}
		if c.calls.Load() != 2 {
			t.Errorf("create ran %d times, want 2 (once a key)", c.calls.Load())
		}
	})
}

// Retries racing each other create once: the others get its answer.
func TestDoConcurrent(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		svc := idempotency.New(s, nil)
		c := &creator{store: s}
		req := idempotency.Request{Scope: "account:a1", Key: "race", Request: []byte("POST /x")}
		var wg sync.WaitGroup
		bodies := make([]string, 16)
		for i := range bodies {
			wg.Go(func() {
				a, err := svc.Do(context.Background(), req, c.create)
				if err != nil {
					t.Errorf("Do: %v", err)
				}
				bodies[i] = string(a.Body)
			})
		}
		wg.Wait()
		if c.changes(t) != 1 {
			t.Errorf("%d creates committed, want 1", c.changes(t))
		}
		for _, b := range bodies {
			if b != bodies[0] {
				t.Errorf("answers differ: %q and %q", b, bodies[0])
			}
		}
	})
}
