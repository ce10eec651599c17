package dnsupdate_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// FuzzUpdate sends the door any message that unpacks: it answers one of
// the rcodes of RFC 2136 (or SERVFAIL), never panics, and writes nothing
// unless it answers NOERROR.
func FuzzUpdate(f *testing.F) {
	for _, m := range []*dns.Msg{
		msg(f, "example.org", nil, []string{"seed.example.org. 60 IN A 198.41.0.4"}),
		msg(f, "example.org", []string{"seed.example.org ANY ANY"}, []string{"seed.example.org. 0 ANY A", "seed.example.org. 60 IN AAAA 2606:4700::1"}),
		msg(f, "example.org", []string{"seed.example.org NONE ANY"}, []string{"_acme-challenge.seed.example.org. 60 IN TXT \"x\""}),
		msg(f, "example.org", nil, []string{"seed.example.org. 60 IN A 10.0.0.1", "example.org. 60 IN NS ns.example.net."}),
	} {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	d := newDoor(f, storage.SQLite)
	allowed := map[int]bool{dns.RcodeSuccess: true, dns.RcodeFormatError: true, dns.RcodeServerFailure: true, dns.RcodeNameError: true,
		dns.RcodeNotImplemented: true, dns.RcodeRefused: true, dns.RcodeYXDomain: true, dns.RcodeYXRrset: true,
		dns.RcodeNXRrset: true, dns.RcodeNotAuth: true, dns.RcodeNotZone: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := new(dns.Msg)
		if m.Unpack(b) != nil {
			return
		}
		ctx := context.Background()
		before, err := d.store.Reader().LastChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := d.u.Update(ctx, signedBy(d.key+"."), "127.0.0.1:53", m)
		if err != nil {
			t.Fatalf("the door's key refused: %v", err)
		}
		if !allowed[a.Rcode] {
			t.Fatalf("rcode %s", dns.RcodeToString[a.Rcode])
		}
		after, err := d.store.Reader().LastChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a.Rcode != dns.RcodeSuccess && after != before {
			t.Fatalf("answered %s (%v) but wrote changes %d..%d", dns.RcodeToString[a.Rcode], a.EDE, before, after)
		}
	})
}
