package dnsupdate_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// The messages Kea's DHCP-DDNS sends (RFC 4703), in both of its modes: a
// lease's name is added, moved and removed, its DHCID kept beside the
// address and matched in prerequisites.
func TestUpdateDHCID(t *testing.T) {
	const (
		d1 = "AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=" // RFC 4701 3.6's example
		d2 = "AAEBOSD+XR3Os/0LozeXVqcNc7FwCfQdWL3b/NaiUDlW2No="
	)
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			dhcid := func() string {
				dom, _ := d.store.Reader().DomainByName(context.Background(), "example.org")
				h, err := d.store.Reader().HostnameByLabel(context.Background(), dom.ID, "laptop")
				if err != nil {
					return "none"
				}
				return h.DHCID
			}
			for _, tc := range []struct {
				name             string
				prereqs, updates []string
				rcode            int
				addr, dhcid      string
			}{
				{"add: the name not in use", []string{"laptop.example.org. 0 NONE ANY"},
					[]string{"laptop.example.org. 300 IN A 198.41.0.50", "laptop.example.org. 300 IN DHCID " + d1}, 0, "198.41.0.50", d1},
				{"add again: in use now", []string{"laptop.example.org. 0 NONE ANY"},
					[]string{"laptop.example.org. 300 IN A 198.41.0.51"}, dns.RcodeYXDomain, "198.41.0.50", d1},
				{"another client's DHCID does not match", []string{"laptop.example.org. 0 IN DHCID " + d2},
					[]string{"laptop.example.org. 0 ANY A", "laptop.example.org. 300 IN A 198.41.0.51"}, dns.RcodeNXRrset, "198.41.0.50", d1},
				{"the lease's own DHCID matches: moved", []string{"laptop.example.org. 0 IN DHCID " + d1},
					[]string{"laptop.example.org. 0 ANY A", "laptop.example.org. 300 IN A 198.41.0.51"}, 0, "198.41.0.51", d1},
				{"without conflict resolution: replaced whole", nil,
					[]string{"laptop.example.org. 0 ANY A", "laptop.example.org. 0 ANY DHCID",
						"laptop.example.org. 300 IN A 198.41.0.52", "laptop.example.org. 300 IN DHCID " + d2}, 0, "198.41.0.52", d2},
				{"a DHCID alone where no address is", nil,
					[]string{"other.example.org. 300 IN DHCID " + d1}, dns.RcodeRefused, "198.41.0.52", d2},
				{"not base64", nil, []string{"laptop.example.org. 300 IN DHCID AAAA"}, dns.RcodeRefused, "198.41.0.52", d2},
				{"remove: the addresses", []string{"laptop.example.org. 0 IN DHCID " + d2},
					[]string{"laptop.example.org. 0 ANY A"}, 0, "", ""},
				{"remove: then the DHCID once no address is left", []string{"laptop.example.org. 0 NONE A", "laptop.example.org. 0 NONE AAAA"},
					[]string{"laptop.example.org. 0 ANY DHCID"}, 0, "", ""},
			} {
				a := d.send(t, msg(t, "example.org", tc.prereqs, tc.updates))
				if a.Rcode != tc.rcode {
					t.Fatalf("%s: %s (%v), want %s", tc.name, dns.RcodeToString[a.Rcode], a.EDE, dns.RcodeToString[tc.rcode])
				}
				if got := d.addr(t, "laptop"); got != tc.addr {
					t.Errorf("%s: laptop serves %q, want %q", tc.name, got, tc.addr)
				}
				if got := dhcid(); tc.addr != "" && got != tc.dhcid {
					t.Errorf("%s: DHCID %q, want %q", tc.name, got, tc.dhcid)
				}
			}
		})
	}
}
