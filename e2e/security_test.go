package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
)

// Labels are lowered by the one rule (labels.Lower): A-Z only. The Kelvin
// sign (U+212A) is not K, and a label holding it is refused rather than
// minted as the "k..." name it looks like.
func TestLabelsLowerASCIIOnly(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	_, key := s.account("pro")
	r := s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "\u212Aelvin"})
	if r.status != 400 || r.str("code") != "BAD_REQUEST" {
		t.Errorf("a label with the Kelvin sign: %d %s, want 400 BAD_REQUEST", r.status, r.raw)
	}
	if !strings.Contains(r.str("error"), "label") {
		t.Errorf("the message does not name the label: %s", r.raw)
	}
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "KELVIN"})
	if h.str("hostname") != "kelvin.example.org" {
		t.Errorf("an ASCII label in capitals minted %q, want kelvin.example.org", h.str("hostname"))
	}
}

// The data directory the service makes is 0700 and every file it writes
// 0600: the store holds key hashes and sealed keys, the token file the
// operator's token.
func TestPrivateFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s := start(t, options{dir: dir})
	_, key := s.account("pro")
	s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	for _, f := range []string{"hostmint.db", "hostmint.db-wal", "hostmint.db-shm", "admin.token"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v (%v), want 0600", f, fi.Mode().Perm(), err)
		}
	}
}

// A token or key file others may read stops the service at start, with
// the command that fixes it, as ssh refuses such a key; so does an admin
// token shorter than 32 characters.
func TestSecretFilesMustBePrivate(t *testing.T) {
	t.Parallel()
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, tc := range []struct {
		name      string
		token     string
		tokenMode os.FileMode
		keyMode   os.FileMode // 0: no key file
		want      string
	}{
		{"token readable by all", strings.Repeat("t", 40), 0o644, 0, "chmod 600"},
		{"token readable by the group", strings.Repeat("t", 40), 0o640, 0, "chmod 600"},
		{"key readable by the group", strings.Repeat("t", 40), 0o600, 0o640, "chmod 600"},
		{"a short token", strings.Repeat("t", 31), 0o600, 0, "at least 32 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := options{dir: t.TempDir()}
			os.WriteFile(filepath.Join(o.dir, "admin.token"), []byte(tc.token+"\n"), tc.tokenMode)
			os.Chmod(filepath.Join(o.dir, "admin.token"), tc.tokenMode)
			if tc.keyMode != 0 {
				kf := filepath.Join(o.dir, "cert.key")
				os.WriteFile(kf, []byte(key+"\n"), tc.keyMode)
				os.Chmod(kf, tc.keyMode)
				o.extra = []string{"cert_encryption_key_file " + kf}
			}
			text, _ := corefile(t, &o)
			inst, err := caddy.Start(caddy.CaddyfileInput{Contents: []byte(text), Filepath: "Corefile", ServerTypeName: "dns"})
			if err == nil {
				inst.Stop()
				t.Fatalf("the service started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refused with %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// Guessing the admin token: ten wrong tokens in a minute from one address,
// and the next request from it is refused 429 RATE_LIMITED with
// Retry-After, even with the right token; the dashboard's sign-in shares
// the count.
func TestAdminTokenGuessing(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	for i := range 10 {
		if r := s.do("GET", "/api/admin/domains", fmt.Sprintf("wrong-token-%d-%s", i, strings.Repeat("x", 30)), nil); r.status != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i, r.status)
		}
	}
	r := s.do("GET", "/api/admin/domains", s.admin, nil)
	if r.status != 429 || r.str("code") != "RATE_LIMITED" || r.header.Get("Retry-After") == "" {
		t.Fatalf("the right token after ten wrong ones: %d %s (Retry-After %q), want 429 RATE_LIMITED with Retry-After",
			r.status, r.raw, r.header.Get("Retry-After"))
	}
	// The sign-in form, with its CSRF cookie, then the right token.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(s.api + "/dashboard/signin")
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := ""
	if m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(form); m != nil {
		csrf = string(m[1])
	}
	resp, err = c.PostForm(s.api+"/dashboard/signin", url.Values{"token": {s.admin}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the dashboard's sign-in after ten wrong tokens: %d (Retry-After %q), want 429 with Retry-After",
			resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// A team cannot point a hostname at an internal name to read what the
// operator's resolvers see of it: special-use suffixes are refused before
// any lookup, and the operator's target_names deny adds to them.
func TestTargetNamesKeptInternal(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2, extra: []string{"resolver 127.0.0.1:9", "target_names deny corp.example"}})
	_, key := s.team(t, "targets.example.net")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "app"})
	s.live(t, key, h.str("id"))
	for _, target := range []string{"db.corp.internal", "printer.local", "nas.home.arpa", "api.localhost", "db.corp.example"} {
		r := s.do("PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"target": target})
		if r.status != 400 || r.str("code") != "BAD_REQUEST" || !strings.Contains(r.str("error"), target) {
			t.Errorf("target %s: %d %s, want 400 BAD_REQUEST naming it", target, r.status, r.raw)
		}
	}
	if got := s.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil); got.str("ip") != "198.41.0.4" {
		t.Errorf("a refused target changed the hostname: %s", got.raw)
	}
}

// response_rate_limit: a burst over UDP from one network gets its
// allowance answered, every second refused answer truncated (so a real
// client retries over TCP), the rest dropped; TCP is answered throughout.
func TestResponseRateLimit(t *testing.T) {
	t.Parallel()
	s := start(t, options{extra: []string{"response_rate_limit 5 2"}})
	_, key := s.account("pro")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("hostname")
	// Forty queries at once from one socket, then the answers.
	conn, err := net.Dial("udp", s.dnsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 40 {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypeA)
		m.Id = uint16(i + 1)
		b, _ := m.Pack()
		conn.Write(b)
	}
	answered, truncated := 0, 0
	conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 1500)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		r := new(dns.Msg)
		if r.Unpack(buf[:n]) != nil {
			continue
		}
		if r.Truncated && len(r.Answer) == 0 {
			truncated++
		} else {
			answered++
		}
	}
	dropped := 40 - answered - truncated
	if answered < 5 || answered > 7 || truncated < 15 || dropped < 15 {
		t.Errorf("40 queries at once: %d answered, %d truncated, %d dropped; want 5, about 17, about 18", answered, truncated, dropped)
	}
	// TCP is answered at once, limited or not.
	if r := s.query(name, dns.TypeA, "tcp"); len(addrs(r)) != 1 {
		t.Errorf("over TCP while UDP is limited: %v", r)
	}
	time.Sleep(time.Second) // the allowance refills
	s.resolves(name, dns.TypeA, "198.41.0.4")
}
