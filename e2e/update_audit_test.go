package e2e

import (
	"net/url"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// exchangeTCP sends b, a signed message, over TCP and reads the answer.
func (s *server) exchangeTCP(t testing.TB, b []byte) *dns.Msg {
	t.Helper()
	c, err := dns.DialTimeout("tcp", s.dnsAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	r, err := c.ReadMsg()
	if err != nil && r == nil {
		t.Fatalf("reading the answer to an UPDATE: %v", err)
	}
	return r
}

// auditRows counts the audit entries of actor (up to 500).
func (s *server) auditRows(t testing.TB, actor string) int {
	t.Helper()
	r := s.must(200, "GET", "/api/admin/audit?limit=500&actor="+url.QueryEscape(actor), s.admin, nil)
	return len(r.body["entries"].([]any))
}

// serial is the SOA serial served for zone.
func (s *server) serial(t testing.TB, zone string) uint32 {
	t.Helper()
	r := s.query(zone, dns.TypeSOA, "tcp")
	if len(r.Answer) != 1 {
		t.Fatalf("SOA of %s: %v", zone, r)
	}
	return r.Answer[0].(*dns.SOA).Serial
}

// UPDATE messages that change nothing write nothing, as a PUT of the same
// address does: no audit entry, no change, no new serial, however often
// they come (external-dns sends the same one at every sync when its TTL
// differs from the one served). Refusals, such as a read-only key probing
// another team's zone, are recorded at most 60 a minute for each key.
func TestUpdateNoopsAndRefusalsBounded(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, _ := spawn(t, updateOptions(t, d, 2))
			teamA, keyA := s.team(t, "a.example.net")
			teamB, _ := s.team(t, "b.example.net")
			kA := s.tsig("/api/admin/accounts/"+teamA+"/tsig-keys", s.admin, nil)
			readOnly := s.tsig("/api/admin/accounts/"+teamB+"/tsig-keys", s.admin,
				map[string]any{"scopes": []map[string]any{{"scope": "hostnames:read"}}})
			s.mustUpdate(kA, "zone a.example.net\nupdate add box.a.example.net 60 A 198.41.0.4")
			id := s.must(200, "GET", "/api/v1/hostnames", keyA, nil).body["hostnames"].([]any)[0].(map[string]any)["id"].(string)
			s.live(t, keyA, id) // its last change: pending to live

			actorA := "tsig:" + kA.id
			rowsA, serial := s.auditRows(t, actorA), s.serial(t, "a.example.net")
			noops := []struct{ prereqs, updates []string }{
				{prereqs: []string{"box.a.example.net. 0 ANY ANY"}},
				{updates: []string{"box.a.example.net. 3600 IN A 198.41.0.4"}}, // the address there, another TTL
				{updates: []string{"box.a.example.net. 0 NONE A 198.41.0.9", "gone.a.example.net. 0 ANY ANY"}},
				{prereqs: []string{"box.a.example.net. 0 IN A 198.41.0.4"}, updates: []string{"box.a.example.net. 60 IN A 198.41.0.4"}},
			}
			for i := range 200 {
				n := noops[i%len(noops)]
				r := s.exchangeTCP(t, signedUpdate(t, kA, uint16(i+1), "a.example.net", n.prereqs, n.updates))
				if r.Rcode != dns.RcodeSuccess {
					t.Fatalf("no-op %d (%v %v): %s %q", i, n.prereqs, n.updates, dns.RcodeToString[r.Rcode], ede(r))
				}
			}
			if got := s.auditRows(t, actorA) - rowsA; got != 0 {
				t.Errorf("200 no-op UPDATEs added %d audit entries, want 0", got)
			}
			if got := s.serial(t, "a.example.net"); got != serial {
				t.Errorf("200 no-op UPDATEs moved the serial from %d to %d", serial, got)
			}
			s.resolves("box.a.example.net", dns.TypeA, "198.41.0.4")

			// A read-only key of team B, against team A's zone and its own.
			if sec := time.Now().Second(); sec > 40 {
				time.Sleep(time.Duration(61-sec) * time.Second) // the 200 within one minute of the quota
			}
			began := time.Now()
			probes := []struct{ zone, update string }{
				{"a.example.net", "box.a.example.net. 0 ANY A"},
				{"a.example.net", "intruder.a.example.net. 60 IN A 198.41.0.5"},
				{"b.example.net", "mine.b.example.net. 60 IN A 198.41.0.6"},
			}
			for i := range 200 {
				p := probes[i%len(probes)]
				r := s.exchangeTCP(t, signedUpdate(t, readOnly, uint16(i+1), p.zone, nil, []string{p.update}))
				if r.Rcode != dns.RcodeRefused {
					t.Fatalf("probe %d (%s): %s %q, want REFUSED", i, p.update, dns.RcodeToString[r.Rcode], ede(r))
				}
			}
			minutes := int(time.Now().Unix()/60-began.Unix()/60) + 1
			if got := s.auditRows(t, "tsig:"+readOnly.id); got > 60*minutes || got == 0 {
				t.Errorf("200 refused UPDATEs over %d minute(s) added %d audit entries, want 1 to %d", minutes, got, 60*minutes)
			}
			s.resolves("box.a.example.net", dns.TypeA, "198.41.0.4")
			s.resolves("intruder.a.example.net", dns.TypeA, "NXDOMAIN")
			s.resolves("mine.b.example.net", dns.TypeA, "NXDOMAIN")
			t.Logf("200 refusals in %s", time.Since(began).Round(time.Millisecond))
		})
	}
}
