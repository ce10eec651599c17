package audit

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A caller sending bad requests in a loop has refusalsPerMinute of them
// recorded a minute; another caller's are recorded all the same.
func TestRefusalQuota(t *testing.T) {
	store := storagetest.Open(t, storage.SQLite)
	l := New(store, slog.New(slog.DiscardHandler))
	minute := time.Date(2026, 11, 22, 6, 0, 30, 0, time.UTC)
	l.now = func() time.Time { return minute } // one minute throughout
	dropped := 0
	l.Dropped = func() { dropped++ }
	for range refusalsPerMinute + 15 {
		l.Finish(&storage.AuditEntry{Actor: "key:noisy", Action: "POST /x"}, 400, "BAD_REQUEST")
	}
	l.Finish(&storage.AuditEntry{Actor: "key:quiet", Action: "POST /x"}, 403, "FORBIDDEN")
	count := func(actor string) int {
		es, err := store.Reader().AuditEntries(context.Background(), storage.AuditFilter{Actor: actor}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if n := count("key:noisy"); n != refusalsPerMinute {
		t.Errorf("%d refusals of the noisy caller recorded, want %d", n, refusalsPerMinute)
	}
	if n := count("key:quiet"); n != 1 {
		t.Errorf("%d refusals of the quiet caller recorded, want 1", n)
	}
	if dropped != 15 {
		t.Errorf("dropped %d, want 15", dropped)
	}
}

// The quota starts again each minute.
func TestRefusalQuotaMinute(t *testing.T) {
	var q quota
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	for range refusalsPerMinute {
		if !q.take("a", t0) {
			t.Fatal("refused within the quota")
		}
	}
	if q.take("a", t0.Add(59*time.Second)) {
		t.Fatal("taken past the quota in the same minute")
	}
	if !q.take("a", t0.Add(time.Minute)) {
		t.Fatal("refused in the next minute")
	}
}

// A request that wrote nothing is recorded by its code alone: the status is
// the door's, kept as given (0 for DNS UPDATE), and which answers are no
// refusal (an HTTP 401 or 503) is the door's to say by giving no code.
func TestFinishRefusal(t *testing.T) {
	t.Parallel()
	store := storagetest.Open(t, storage.SQLite)
	l := New(store, slog.New(slog.DiscardHandler))
	for i, tc := range []struct {
		status   int
		code     string
		recorded bool
	}{
		{200, "", false},                       // ended well
		{401, "", false},                       // the HTTP door's unknown caller
		{503, "", false},                       // the HTTP door's unreachable store
		{200, apierror.CodeUnavailable, false}, // dyndns2's 911: the store again
		{0, apierror.CodeUnavailable, false},   // DNS UPDATE on a read-only node
		{403, apierror.CodeForbidden, true},
		{200, apierror.CodeForbidden, true}, // dyndns2's "abuse"
		{0, "NXRRSET", true},                // DNS UPDATE's own refusal
		{0, apierror.CodeUnauthorized, true},
	} {
		actor := fmt.Sprintf("key:%d", i)
		l.Finish(&storage.AuditEntry{Actor: actor, Action: "POST /x"}, tc.status, tc.code)
		es, err := store.Reader().AuditEntries(context.Background(), storage.AuditFilter{Actor: actor}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(es) == 1; got != tc.recorded || len(es) > 1 {
			t.Errorf("%d %q: %d entries, want recorded %v", tc.status, tc.code, len(es), tc.recorded)
			continue
		}
		if tc.recorded && (es[0].Status != tc.status || es[0].Result != tc.code) {
			t.Errorf("%d %q: recorded %d %q", tc.status, tc.code, es[0].Status, es[0].Result)
		}
	}
}
