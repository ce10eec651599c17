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
