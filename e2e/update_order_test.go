package e2e

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// A message is one change in every order ([P2], nsupdate): one that
// publishes a DNS-01 value under a name and mints that name, the value
// first, is applied whole; the value is served with the address.
func TestUpdateMintWithItsChallenge(t *testing.T) {
	eachDialect(t, updateOptions(t, "", 2), func(t *testing.T, s *server) {
		id, _ := s.team(t, "team.example.net")
		k := s.tsig("/api/admin/accounts/"+id+"/tsig-keys", s.admin, map[string]any{"name": "acme"})
		value := strings.Repeat("q", 43)
		s.mustUpdate(k, "zone team.example.net\n"+
			"update add _acme-challenge.fresh.team.example.net 60 TXT \""+value+"\"\n"+
			"update add fresh.team.example.net 60 A 198.41.0.77")
		s.resolves("fresh.team.example.net", dns.TypeA, "198.41.0.77")
		m := s.query("_acme-challenge.fresh.team.example.net", dns.TypeTXT, "udp")
		if txt, ok := first[*dns.TXT](m.Answer); !ok || strings.Join(txt.Txt, "") != value {
			t.Errorf("the challenge value is not served: %v", m)
		}
	})
}
