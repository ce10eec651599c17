package app

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

// countingIndex is an Index that counts its loads.
type countingIndex struct{ loads int }

func (c *countingIndex) Load(context.Context, storage.Queries) error { c.loads++; return nil }
func (c *countingIndex) Apply(context.Context, storage.Queries, []storage.Change) error {
	return nil
}
func (c *countingIndex) Len() int64           { return 1 }
func (c *countingIndex) Unservable() []string { return nil }

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Two configurations on one store and one address, as a CoreDNS reload
// runs them side by side, share the store, its index and the listener;
// the last Stop closes them.
func TestStartShares(t *testing.T) {
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DSN = filepath.Join(dir, "hostmint.db")
	cfg.AdminTokenFile = filepath.Join(dir, "admin.token")
	cfg.API = freeAddr(t)
	cfg.Domains = []string{"example.org"}
	cfg.Nameservers = []Nameserver{{Name: "ns1.example.org.", Addr: "127.0.0.1:53"}}
	made := 0
	newIndex := func(func(*storage.Domain) (*domains.Signer, error)) Index {
		made++
		return &countingIndex{}
	}
	a, err := Start(cfg, newIndex)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(cfg, newIndex)
	if err != nil {
		t.Fatal(err)
	}
	if made != 1 || a.Index() != b.Index() {
		t.Errorf("two starts on one store made %d indexes (shared: %v), want 1", made, a.Index() == b.Index())
	}
	if IndexSize() != 1 {
		t.Errorf("IndexSize = %d, want 1 (one store open)", IndexSize())
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + cfg.API + "/api/health")
	if err != nil {
		t.Fatalf("the listener closed while a configuration still uses it: %v", err)
	}
	resp.Body.Close()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if IndexSize() != 0 {
		t.Errorf("IndexSize = %d after the last Stop, want 0", IndexSize())
	}
	if _, err := http.Get("http://" + cfg.API + "/api/health"); err == nil {
		t.Errorf("the listener still answers after the last Stop")
	}
}
