package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// The ACME clients that speak DNS UPDATE obtain an apex + wildcard
// certificate from Pebble, with a TSIG key that may only write the
// challenges of that one hostname ([P2], a team's domain): certbot with its
// rfc2136 plugin, and the lego CLI with --dns rfc2136.

// updateClientSetup starts a binary with dynamic_update, a team with its
// domain and a live hostname, a TSIG key limited to that hostname's
// DNS-01 values, and Pebble asking this server.
func updateClientSetup(t *testing.T, domain string) (s *server, ca *dns01Pebble, k tsigKey, name string) {
	t.Helper()
	s, _ = spawn(t, updateOptions(t, storage.SQLite, 2))
	_, key := s.team(t, domain)
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "box"})
	s.live(t, key, h.str("id"))
	name = h.str("hostname")
	k = s.tsig("/api/v1/tsig-keys", key, map[string]any{"name": "acme",
		"scopes": []map[string]any{{"scope": "dns01:write", "hostname": h.str("id")}}})
	// The key reaches nothing else: not another name, not the address.
	s.refusedUpdate(k, "update add other."+domain+" 60 A 198.41.0.4", "REFUSED")
	s.refusedUpdate(k, "update delete "+name+" A", "REFUSED")
	return s, dns01StartPebble(t, s.dnsAddr), k, name
}

// certbot with python3-certbot-dns-rfc2136: it finds the zone with signed
// SOA queries, then adds and deletes one value at a time.
func TestUpdateCertbot(t *testing.T) {
	t.Parallel()
	s, ca, k, name := updateClientSetup(t, "certbot.example.net")
	dir := t.TempDir()
	host, port, _ := strings.Cut(s.dnsAddr, ":")
	creds := filepath.Join(dir, "rfc2136.ini")
	// The algorithm in upper case: certbot 2.1 falls back to HMAC-MD5 otherwise.
	ini := fmt.Sprintf("dns_rfc2136_server = %s\ndns_rfc2136_port = %s\ndns_rfc2136_name = %s.\n"+
		"dns_rfc2136_secret = %s\ndns_rfc2136_algorithm = HMAC-SHA256\n", host, port, k.name, k.secret)
	if err := os.WriteFile(creds, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(dir, "config")
	dns01Run(t, []string{"REQUESTS_CA_BUNDLE=" + ca.rootCA}, "certbot", "certonly",
		"--server", ca.dir,
		"--config-dir", cfgDir, "--work-dir", filepath.Join(dir, "work"), "--logs-dir", filepath.Join(dir, "logs"),
		"--non-interactive", "--agree-tos", "--register-unsafely-without-email",
		"--dns-rfc2136", "--dns-rfc2136-credentials", creds, "--dns-rfc2136-propagation-seconds", "1",
		"-d", name, "-d", "*."+name)
	chain, err := os.ReadFile(filepath.Join(cfgDir, "live", name, "fullchain.pem"))
	if err != nil {
		t.Fatal(err)
	}
	dns01Check(t, ca, chain, name)
	// certbot deleted what it added.
	if got := txts(s, "_acme-challenge."+name); got != "" {
		t.Errorf("challenge values left after certbot's cleanup: %q", got)
	}
}

// The lego CLI with --dns rfc2136: one message deletes the challenge RRset
// and adds the value.
func TestUpdateLegoCLI(t *testing.T) {
	t.Parallel()
	s, ca, k, name := updateClientSetup(t, "lego.example.net")
	dir := t.TempDir()
	env := []string{
		"RFC2136_NAMESERVER=" + s.dnsAddr,
		"RFC2136_TSIG_KEY=" + k.name + ".",
		"RFC2136_TSIG_SECRET=" + k.secret,
		"RFC2136_TSIG_ALGORITHM=hmac-sha256.",
		"RFC2136_SEQUENCE_INTERVAL=1",
		"RFC2136_POLLING_INTERVAL=1",
		"RFC2136_PROPAGATION_TIMEOUT=20",
		"LEGO_CA_CERTIFICATES=" + ca.rootCA,
	}
	path := filepath.Join(dir, "lego")
	dns01Run(t, env, "lego",
		"--server", ca.dir, "--accept-tos", "--email", "x@example.org", "--path", path,
		"--dns", "rfc2136", "--dns.resolvers", s.dnsAddr, "--dns.disable-cp",
		"-d", name, "-d", "*."+name, "run")
	chain, err := os.ReadFile(filepath.Join(path, "certificates", name+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	dns01Check(t, ca, chain, name)
}
