package storage_test

import (
	"testing"

	"github.com/hostmint/hostmint/storage"
)

func TestHostnameZone(t *testing.T) {
	for _, tt := range []struct{ label, name, want string }{
		{"www", "www.example.test", "example.test"},
		{"a", "a.b.c.example", "b.c.example"},
		{"x", "x.x.test", "x.test"},
	} {
		h := &storage.Hostname{Label: tt.label, Name: tt.name}
		if got := h.Zone(); got != tt.want {
			t.Errorf("Zone of %s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHostnameActiveExpired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status          string
		expiresAt       int64
		active, expired bool
	}{
		{storage.StatusLive, 0, true, false},
		{storage.StatusLive, 1001, true, false},
		{storage.StatusLive, 1000, true, true},
		{storage.StatusPending, 1000, true, false},
		{storage.StatusSuspended, 0, false, false},
		{storage.StatusReleased, 1000, false, false},
		{storage.StatusTerminated, 0, false, false},
	} {
		h := storage.Hostname{Status: tc.status, ExpiresAt: tc.expiresAt}
		if h.Active() != tc.active || h.Expired(1000) != tc.expired {
			t.Errorf("%s expiring at %d: active %v, expired %v; want %v, %v", tc.status, tc.expiresAt, h.Active(), h.Expired(1000), tc.active, tc.expired)
		}
	}
	for _, s := range storage.ActiveStatuses {
		if !(&storage.Hostname{Status: s}).Active() {
			t.Errorf("%s is in storage.ActiveStatuses but not Active", s)
		}
	}
}
