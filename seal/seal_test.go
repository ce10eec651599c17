package seal

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k := make(Key, 32)
	rand.Read(k)
	s, err := k.Seal([]byte("secret"), "domain:1")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := k.Open(s, "domain:1"); err != nil || !bytes.Equal(p, []byte("secret")) {
		t.Fatalf("Open = %q, %v", p, err)
	}
	if _, err := k.Open(s, "domain:2"); err == nil {
		t.Fatal("opened under another label")
	}
	other := make(Key, 32)
	rand.Read(other)
	if _, err := other.Open(s, "domain:1"); err == nil {
		t.Fatal("opened with another key")
	}
	if _, err := Key(nil).Seal([]byte("x"), ""); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no key: %v", err)
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600)
	if k, err := LoadKey(good); err != nil || len(k) != 32 {
		t.Fatalf("LoadKey = %v, %v", k, err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("c2hvcnQ="), 0o600)
	if _, err := LoadKey(short); err == nil {
		t.Fatal("short key accepted")
	}
	if _, err := LoadKey(filepath.Join(dir, "none")); err == nil {
		t.Fatal("missing file accepted")
	}
}
