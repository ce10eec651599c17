package audit

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

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
		l.Finish(&storage.AuditEntry{Actor: "key:noisy", Action: "POST /x"}, http.StatusBadRequest, "BAD_REQUEST")
	}
	l.Finish(&storage.AuditEntry{Actor: "key:quiet", Action: "POST /x"}, http.StatusForbidden, "FORBIDDEN")
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
