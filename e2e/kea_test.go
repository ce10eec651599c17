package e2e

import (
	ebinary "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Debian's Kea DHCP-DDNS server (D2, kea-dhcp-ddns 2.2) in front of
// Hostmint, fed NameChangeRequests as a Kea DHCP server sends them (UDP,
// a two-octet length and the JSON): a lease's name added, moved to a new
// address and removed, with RFC 4703's conflict resolution and without,
// on both profiles. Kea writes a DHCID beside every address it adds.

// keaD2 runs kea-dhcp-ddns for zone at the DNS server dnsAddr with the
// TSIG key k; it returns the address its NCR listener takes, and its log.
func keaD2(t *testing.T, zone, dnsAddr string, k tsigKey) (addr, logPath string) {
	t.Helper()
	if _, err := exec.LookPath("kea-dhcp-ddns"); err != nil {
		t.Fatal("kea-dhcp-ddns is not installed: run scripts/test-deps.sh")
	}
	dir := t.TempDir()
	ncrPort := freePort(t)
	host, port, _ := net.SplitHostPort(dnsAddr)
	var dnsPort int
	fmt.Sscan(port, &dnsPort)
	conf := map[string]any{"DhcpDdns": map[string]any{
		"ip-address": "127.0.0.1", "port": ncrPort, "dns-server-timeout": 2000,
		"ncr-protocol": "UDP", "ncr-format": "JSON",
		"tsig-keys": []any{map[string]any{"name": k.name, "algorithm": "HMAC-SHA256", "secret": k.secret}},
		"forward-ddns": map[string]any{"ddns-domains": []any{map[string]any{
			"name": dns.Fqdn(zone), "key-name": k.name,
			"dns-servers": []any{map[string]any{"ip-address": host, "port": dnsPort}},
		}}},
		"reverse-ddns": map[string]any{"ddns-domains": []any{}},
		"loggers": []any{map[string]any{"name": "kea-dhcp-ddns", "severity": "DEBUG", "debuglevel": 40,
			"output_options": []any{map[string]any{"output": "stdout"}}}},
	}}
	b, _ := json.MarshalIndent(conf, "", "  ")
	path := filepath.Join(dir, "kea-dhcp-ddns.conf")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath = filepath.Join(dir, "d2.log")
	out, _ := os.Create(logPath)
	cmd := exec.Command("kea-dhcp-ddns", "-c", path)
	cmd.Env = append(os.Environ(), "KEA_PIDFILE_DIR="+dir, "KEA_LOCKFILE_DIR="+dir)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("kea-dhcp-ddns log:\n%s", b)
		}
	})
	// Ready once it logs that it listens.
	if !within(10*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "DHCP_DDNS_STARTED") || strings.Contains(string(b), "DHCP_DDNS_QUEUE_MGR_STARTED")
	}) {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("kea-dhcp-ddns did not start:\n%s", b)
	}
	return fmt.Sprintf("127.0.0.1:%d", ncrPort), logPath
}

// keaSaid counts the lines of D2's log at path that hold message.
func keaSaid(path, message string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), message)
}

// ncr sends one NameChangeRequest to D2 at addr.
func ncr(t *testing.T, addr string, add bool, fqdn, ip, dhcid string, conflicts bool) {
	t.Helper()
	change := 1
	if add {
		change = 0
	}
	body, _ := json.Marshal(map[string]any{
		"change-type": change, "forward-change": true, "reverse-change": false,
		"fqdn": dns.Fqdn(fqdn), "ip-address": ip, "dhcid": dhcid,
		"lease-expires-on": time.Now().Add(time.Hour).UTC().Format("20060102150405"), "lease-length": 3600,
		"use-conflict-resolution": conflicts,
	})
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := ebinary.BigEndian.AppendUint16(nil, uint16(len(body)))
	if _, err := c.Write(append(msg, body...)); err != nil {
		t.Fatal(err)
	}
}

// dhcidHex is a DHCID's RDATA as a Kea DHCP server hands it to D2: an
// identifier type (2, a DUID), a digest type (1, SHA-256), the digest.
func dhcidHex(seed byte) string {
	b := []byte{0, 2, 1}
	for i := range 32 {
		b = append(b, seed+byte(i))
	}
	return hex.EncodeToString(b)
}

func TestKeaDHCPDDNS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile int
		d       storage.Dialect
	}{{1, storage.SQLite}, {1, storage.Postgres}, {2, storage.SQLite}, {2, storage.Postgres}} {
		for _, conflicts := range []bool{true, false} {
			t.Run(fmt.Sprintf("P%d/%s/conflict-resolution=%v", tc.profile, tc.d, conflicts), func(t *testing.T) {
				t.Parallel()
				s := start(t, updateOptions(t, tc.d, tc.profile))
				zone := "example.org"
				var k tsigKey
				if tc.profile == 2 {
					zone = "lan.example.net"
					id, _ := s.team(t, zone)
					k = s.tsig("/api/admin/accounts/"+id+"/tsig-keys", s.admin, map[string]any{"name": "kea"})
				} else {
					id, _ := s.account("business")
					k = s.tsig("/api/admin/accounts/"+id+"/tsig-keys", s.admin, map[string]any{"name": "kea"})
				}
				d2, d2log := keaD2(t, zone, s.dnsAddr, k)
				name := "laptop." + zone
				lease := dhcidHex(7)

				// A lease: its name added, with the DHCID beside the address.
				ncr(t, d2, true, name, "198.41.0.60", lease, conflicts)
				s.resolves(name, dns.TypeA, "198.41.0.60")
				eventually(t, 5*time.Second, func() bool {
					m := s.query(name, dns.TypeDHCID, "udp")
					r, ok := first[*dns.DHCID](m.Answer)
					return ok && r.Digest != ""
				}, "%s serves no DHCID", name)

				// Renewed at another address: the name moves.
				ncr(t, d2, true, name, "198.41.0.61", lease, conflicts)
				s.resolves(name, dns.TypeA, "198.41.0.61")

				// Released: the name goes.
				ncr(t, d2, false, name, "198.41.0.61", lease, conflicts)
				s.resolves(name, dns.TypeA, "NXDOMAIN")

				// Kea counts each request done. With conflict resolution, a
				// failed prerequisite is one of its steps (RFC 4703 5.3: "name
				// not in use" fails for a name it holds, then "DHCID matches"
				// holds; the DHCID's own removal after the last address finds
				// it gone with the name).
				eventually(t, 5*time.Second, func() bool {
					return keaSaid(d2log, "DHCP_DDNS_ADD_SUCCEEDED") == 2 && keaSaid(d2log, "DHCP_DDNS_REMOVE_SUCCEEDED") == 1
				}, "Kea did not report two additions and a removal done")
				for _, failed := range []string{"DHCP_DDNS_ADD_FAILED", "DHCP_DDNS_REMOVE_FAILED", "DHCP_DDNS_FORWARD_ADD_REJECTED",
					"DHCP_DDNS_FORWARD_REPLACE_REJECTED", "DHCP_DDNS_FORWARD_REMOVE_ADDRS_REJECTED", "DHCP_DDNS_FORWARD_REMOVE_RRS_REJECTED"} {
					if n := keaSaid(d2log, failed); n > 0 {
						t.Errorf("Kea logged %s %d times", failed, n)
					}
				}
				// And the audit log has its messages, a refusal only as a
				// prerequisite's rcode, never a rule's.
				for _, e := range s.must(200, "GET", "/api/admin/audit?actor=tsig:"+k.id, s.admin, nil).body["entries"].([]any) {
					e := e.(map[string]any)
					if r := e["result"].(string); r != "ok" && r != "YXDOMAIN" && r != "NXRRSET" {
						t.Errorf("Kea's UPDATE refused: %v", e)
					}
				}
			})
		}
	}
}
