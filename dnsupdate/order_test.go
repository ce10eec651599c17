package dnsupdate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// A message is one change in every order: a hostname it mints holds the
// DNS-01 value the same message publishes under it, whether the value
// comes before the address or after.
func TestUpdateMintsBeforeNamesUnder(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			value := strings.Repeat("k", 43)
			for _, tc := range []struct {
				label   string
				updates []string
			}{
				{"first", []string{"_acme-challenge.first.example.org. 60 IN TXT \"" + value + "\"", "first.example.org. 60 IN A 198.41.0.7"}},
				{"second", []string{"second.example.org. 60 IN A 198.41.0.8", "_acme-challenge.second.example.org. 60 IN TXT \"" + value + "\""}},
			} {
				if a := d.send(t, msg(t, "example.org", nil, tc.updates)); a.Rcode != dns.RcodeSuccess {
					t.Fatalf("%s: %s %v", tc.label, dns.RcodeToString[a.Rcode], a.EDE)
				}
				dom, err := d.store.Reader().DomainByName(context.Background(), "example.org")
				if err != nil {
					t.Fatal(err)
				}
				h, err := d.store.Reader().HostnameByLabel(context.Background(), dom.ID, tc.label)
				if err != nil {
					t.Fatalf("%s: not minted: %v", tc.label, err)
				}
				cs, err := d.store.Reader().Challenges(context.Background(), h.ID)
				if err != nil || len(cs) != 1 || cs[0].Value != value {
					t.Errorf("%s: challenges %v (%v), want the one value", tc.label, cs, err)
				}
			}
			// A value under a name no hostname holds, nor the message mints, is still refused.
			if a := d.send(t, msg(t, "example.org", nil, []string{"_acme-challenge.nobody.example.org. 60 IN TXT \"" + value + "\""})); a.Rcode != dns.RcodeRefused ||
				a.EDE == nil || !strings.Contains(a.EDE.ExtraText, "is no hostname") {
				t.Errorf("a value under no hostname: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
			}
		})
	}
}
