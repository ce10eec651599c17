package idempotency_test

import (
	"errors"
	"testing"

	"github.com/hostmint/hostmint/idempotency"
	"github.com/hostmint/hostmint/storage"
)

// A request that names no credential is refused before anything runs:
// its key would share one namespace with every other such request.
func TestDoNoScope(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		svc := idempotency.New(s, nil)
		c := &creator{store: s}
		req := idempotency.Request{Key: "k", Request: []byte("POST /register")}
		if a, err := svc.Do(t.Context(), req, c.create); err == nil {
			t.Fatalf("a key without a scope: %+v, want an error", a)
		}
		if c.calls.Load() != 0 {
			t.Errorf("create ran %d times, want none", c.calls.Load())
		}
		if _, err := s.Reader().IdempotencyKey(t.Context(), "", "k", 0); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("kept answer for no scope: %v, want none", err)
		}
	})
}
