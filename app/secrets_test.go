package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A writer makes its certificate key at first start (mode 0600, 32 random
// bytes) and reads the same key afterwards; a read-only node never makes
// one, and says whose key it needs.
func TestCertKeyMakesItself(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "cert.key")
	if _, err := certKey(path, true); err == nil || !strings.Contains(err.Error(), "writers' key") {
		t.Errorf("read-only node without a key file: %v, want an error naming the writers' key", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a read-only node wrote a key file")
	}
	first, err := certKey(path, false)
	if err != nil || len(first) != 32 {
		t.Fatalf("first start: %d bytes, %v; want a 32-byte key", len(first), err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	for _, readOnly := range []bool{false, true} {
		again, err := certKey(path, readOnly)
		if err != nil || string(again) != string(first) {
			t.Errorf("read-only %t: a different key (%v) on the next start", readOnly, err)
		}
	}
	if k, err := certKey("", false); k != nil || err != nil {
		t.Errorf("no key file configured: %v, %v; want none", k, err)
	}
}
