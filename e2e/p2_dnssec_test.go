package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// certKeyFile writes a fresh encryption key file and returns its Corefile line.
func certKeyFile(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	path := filepath.Join(t.TempDir(), "cert.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "cert_encryption_key_file " + path
}

// domainID finds a domain's id through the admin API.
func (s *server) domainID(t *testing.T, name string) string {
	t.Helper()
	l := s.must(200, "GET", "/api/admin/domains", s.admin, nil)
	for _, d := range l.body["domains"].([]any) {
		if d := d.(map[string]any); d["name"] == name {
			return d["id"].(string)
		}
	}
	t.Fatalf("no domain %s", name)
	return ""
}

// delv validates name/qtype from the zone's own key as trust anchor.
func delv(t *testing.T, s *server, anchor, zone, name, qtype string) string {
	t.Helper()
	host, port, _ := strings.Cut(s.dnsAddr, ":")
	out, _ := exec.Command("delv", "-a", anchor, "+root="+zone, "@"+host, "-p", port, name, qtype).CombinedOutput()
	return string(out)
}

// The zone is signed online: every answer with DO carries signatures that
// BIND's delv validates from the zone's key, denial included; answers
// without DO carry no DNSSEC records.
func TestP2DNSSEC(t *testing.T) {
	if _, err := exec.LookPath("delv"); err != nil {
		t.Fatal("delv is not installed: run ./scripts/test-deps.sh")
	}
	eachDialect(t, options{profile: 2, extra: []string{certKeyFile(t)}}, func(t *testing.T, s *server) {
		_, key := s.team(t, "signed.example.net")
		id := s.domainID(t, "signed.example.net")
		s.must(409, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"ds_published": true})
		d := s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"dnssec": true})
		ds, _ := d.body["ds"].([]any)
		if d.body["dnssec"] != true || len(ds) != 1 {
			t.Fatalf("enable: %s", d.raw)
		}
		// The DS the API gives is the DNSKEY DNS serves.
		m := s.query("signed.example.net", dns.TypeDNSKEY, "udp")
		if len(m.Answer) != 1 {
			t.Fatalf("DNSKEY: %v", m)
		}
		k := m.Answer[0].(*dns.DNSKEY)
		if got := k.ToDS(dns.SHA256).String(); got != ds[0] {
			t.Fatalf("DS %s does not match the served key (%s)", ds[0], got)
		}
		anchor := filepath.Join(t.TempDir(), "anchor")
		os.WriteFile(anchor, []byte(fmt.Sprintf("trust-anchors { signed.example.net. static-key %d %d %d %q; };\n",
			k.Flags, k.Protocol, k.Algorithm, k.PublicKey)), 0o600)

		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "web"})
		s.live(t, key, h.str("id"))
		rec := "/api/v1/hostnames/" + h.str("id") + "/records"
		s.must(201, "POST", rec, key, map[string]any{"type": "TXT", "text": "v=spf1 -all"})
		s.must(201, "POST", rec, key, map[string]any{"type": "SRV", "name": "_sip._tcp", "priority": 1, "weight": 1, "port": 5060, "target": "web.signed.example.net"})
		s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"ds_published": true})
		s.must(201, "POST", rec, key, map[string]any{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1,
			"association": strings.Repeat("ab", 32)})

		tests := []struct {
			name, qtype string
			want        string
		}{
			{"web.signed.example.net", "A", "; fully validated\nweb.signed.example.net.\t60\tIN\tA\t198.41.0.4"},
			{"web.signed.example.net", "TXT", "; fully validated"},
			{"_sip._tcp.web.signed.example.net", "SRV", "; fully validated"},
			{"_443._tcp.web.signed.example.net", "TLSA", "; fully validated"},
			{"signed.example.net", "SOA", "; fully validated"},
			{"signed.example.net", "NS", "; fully validated"},
			{"signed.example.net", "DNSKEY", "; fully validated"},
			{"nothing.signed.example.net", "A", "; negative response, fully validated"},
			{"web.signed.example.net", "MX", "; negative response, fully validated"},
			{"_tcp.web.signed.example.net", "TXT", "; negative response, fully validated"},
			{"signed.example.net", "A", "; negative response, fully validated"},
		}
		for _, tc := range tests {
			if out := delv(t, s, anchor, "signed.example.net", tc.name, tc.qtype); !strings.Contains(out, tc.want) {
				t.Errorf("delv %s %s:\n%s", tc.name, tc.qtype, out)
			}
		}

		// Without DO, no DNSSEC records; with DO, an RRSIG per RRset.
		plain := s.query("web.signed.example.net", dns.TypeA, "udp")
		if hasType(plain, dns.TypeRRSIG) || hasType(plain, dns.TypeNSEC) {
			t.Fatalf("DNSSEC records without DO: %v", plain)
		}
		signed := s.queryDO("nothing.signed.example.net", dns.TypeA)
		if signed.Rcode != dns.RcodeSuccess || !hasType(signed, dns.TypeNSEC) || !hasType(signed, dns.TypeRRSIG) {
			t.Fatalf("black lie: %v", signed)
		}

		// Unsigning needs the DS gone from the parent first.
		s.must(409, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"dnssec": false})
		s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"ds_published": false})
		if u := s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"dnssec": false}); u.body["ds"] != nil || u.body["dnssec"] != false {
			t.Fatalf("unsign: %s", u.raw)
		}
		if m := s.queryDO("web.signed.example.net", dns.TypeA); hasType(m, dns.TypeRRSIG) {
			t.Fatalf("still signed: %v", m)
		}
	})
}

// Keys are sealed with the deployment's key: without one, DNSSEC is 501.
func TestP2DNSSECNeedsKey(t *testing.T) {
	s := start(t, options{profile: 2})
	s.team(t, "plain.example.net")
	if r := s.must(501, "PATCH", "/api/admin/domains/"+s.domainID(t, "plain.example.net"), s.admin, map[string]any{"dnssec": true}); r.str("code") != "NOT_IMPLEMENTED" {
		t.Fatal(string(r.raw))
	}
}

func hasType(m *dns.Msg, t uint16) bool {
	for _, rr := range append(append(append([]dns.RR{}, m.Answer...), m.Ns...), m.Extra...) {
		if rr.Header().Rrtype == t {
			return true
		}
	}
	return false
}

// queryDO asks over UDP with the DO bit.
func (s *server) queryDO(name string, qtype uint16) *dns.Msg {
	s.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.SetEdns0(1232, true)
	r, err := dns.Exchange(m, s.dnsAddr)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// A cert_encryption_key_file that does not exist yet is made at first start
// (mode 0600), as Corefile.example's ./data/cert.key is on the README's
// run command, so DNSSEC can be enabled at once; a restart keeps the key,
// and the zone stays signed with it.
func TestCertKeyMadeAtFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kf := filepath.Join(dir, "data", "cert.key")
	o := options{profile: 2, dialect: storage.SQLite, dir: dir, extra: []string{"cert_encryption_key_file " + kf}}
	s := start(t, o)
	fi, err := os.Stat(kf)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file after the first start: %v (mode %v), want mode 0600", err, fi.Mode().Perm())
	}
	s.team(t, "made.example.net")
	id := s.domainID(t, "made.example.net")
	s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, map[string]any{"dnssec": true})
	before, _ := os.ReadFile(kf)
	s.stop()
	s = start(t, o)
	if after, _ := os.ReadFile(kf); string(after) != string(before) {
		t.Error("the key file changed on restart")
	}
	if m := s.query("made.example.net", dns.TypeDNSKEY, "udp"); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Errorf("DNSKEY after a restart: %v", m)
	}
}
