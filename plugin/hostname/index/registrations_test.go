package index

import (
	"context"
	"testing"
	"time"

	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// The index serves a registration's values at its name below
// acme_dns_domain and nowhere else; a hostname never answers at or below
// that name; values that have stopped being served leave the index at the
// next change.
func TestRegistrationNodes(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, storage.SQLite)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	old := now - records.ChallengeLife.Milliseconds() + 200 // stops being served in 200 ms
	write := func(fn func(ctx context.Context, tx *storage.Tx) error) {
		t.Helper()
		if _, err := st.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertDomain(ctx, &storage.Domain{ID: "d", Name: "example.org", Status: storage.DomainActive, CreatedAt: 1}); err != nil {
			return err
		}
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "a", Name: "a", Plan: "business", CreatedAt: 1}); err != nil {
			return err
		}
		// A hostname that held the label before acme_dns_domain named it.
		if err := tx.InsertHostname(ctx, &storage.Hostname{ID: "h", AccountID: "a", DomainID: "d", Label: "auth", Name: "auth.example.org",
			IP: "192.0.2.1", Addrs: "192.0.2.1", Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1}); err != nil {
			return err
		}
		for _, r := range []storage.Registration{
			{ID: "served", Subdomain: "s1", Name: "s1.auth.example.org", TXTNew: "new", TXTOld: "old", TXTAt: now},
			{ID: "elsewhere", Subdomain: "s2", Name: "s2.other.example.org", TXTNew: "x", TXTAt: now},
			{ID: "ending", Subdomain: "s3", Name: "s3.auth.example.org", TXTNew: "y", TXTAt: old},
		} {
			r.PasswordHash, r.UsedAt, r.CreatedAt = "h", r.TXTAt, r.TXTAt
			if err := tx.InsertRegistration(ctx, &r); err != nil {
				return err
			}
		}
		return nil
	})
	ix := New(nil, "auth.example.org")
	if err := ix.Load(ctx, st.Reader()); err != nil {
		t.Fatal(err)
	}
	txt := func(name string) []string {
		n := ix.Node(name)
		if n == nil || n.Expires <= time.Now().UnixMilli() {
			return nil
		}
		var out []string
		for _, rr := range n.RRsets[dns.TypeTXT] {
			out = append(out, rr.(*dns.TXT).Txt...)
		}
		return out
	}
	if got := txt("s1.auth.example.org."); len(got) != 2 || got[0] != "new" || got[1] != "old" {
		t.Errorf("s1: %v, want [new old]", got)
	}
	if n := ix.Node("s2.other.example.org."); n != nil {
		t.Errorf("a registration outside acme_dns_domain is served: %+v", n)
	}
	if n := ix.Node("auth.example.org."); n != nil {
		t.Errorf("the hostname at acme_dns_domain is served: %+v", n)
	}

	time.Sleep(300 * time.Millisecond) // s3's values stop being served
	write(func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.PublishRegistration(ctx, "served", "newer", time.Now().UnixMilli()); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindRegistration, "served")
	})
	cs, err := st.Reader().ChangesAfter(ctx, int64(ix.serial.Load()), nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(ctx, st.Reader(), cs); err != nil {
		t.Fatal(err)
	}
	if got := txt("s1.auth.example.org."); len(got) != 2 || got[0] != "newer" || got[1] != "new" {
		t.Errorf("s1 after an update: %v, want [newer new]", got)
	}
	if n := ix.Node("s3.auth.example.org."); n != nil {
		t.Errorf("s3's values stopped being served, but its node stays: %+v", n)
	}
	if _, ok := ix.regNames["ending"]; ok || len(ix.regNames) != 1 {
		t.Errorf("registrations held: %v, want s1's alone", ix.regNames)
	}
}
