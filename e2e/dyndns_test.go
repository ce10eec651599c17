package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// dynAnswer is what a dyndns2 client reads.
type dynAnswer struct {
	status int
	header http.Header
	body   string // without the final newline
}

// dyn sends GET path?query with HTTP Basic auth (no auth when key is "")
// and the extra headers, as a router would.
func (s *server) dyn(t testing.TB, path, key, query string, header map[string]string) dynAnswer {
	t.Helper()
	req, err := http.NewRequest("GET", s.api+path+"?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("whatever-the-router-sends", key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s?%s: %v", path, query, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET %s?%s: Content-Type %q, want text/plain", path, query, ct)
	}
	return dynAnswer{status: resp.StatusCode, header: resp.Header, body: strings.TrimSuffix(string(b), "\n")}
}

// dynRow is one request and the lines it must be answered with.
type dynRow struct {
	name   string
	path   string // "" is /nic/update
	key    string
	query  string
	header map[string]string
	status int // 0 is 200
	want   string
	then   func(t *testing.T) // what else must hold afterwards
}

func runDyn(t *testing.T, s *server, rows []dynRow) {
	t.Helper()
	for _, r := range rows {
		path, status := r.path, r.status
		if path == "" {
			path = "/nic/update"
		}
		if status == 0 {
			status = 200
		}
		a := s.dyn(t, path, r.key, r.query, r.header)
		if a.status != status || a.body != r.want {
			t.Errorf("%s: GET %s?%s = %d %q, want %d %q", r.name, path, r.query, a.status, a.body, status, r.want)
			continue
		}
		if status == 401 && a.header.Get("WWW-Authenticate") != `Basic realm="hostmint"` {
			t.Errorf("%s: WWW-Authenticate %q, want Basic realm=\"hostmint\"", r.name, a.header.Get("WWW-Authenticate"))
		}
		if r.then != nil {
			r.then(t)
		}
	}
}

// Profile 2: every answer of the protocol, over PUT's rules.
func TestDynDNSP2(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	team, key := s.team(t, "dyn.example.net")
	_, otherKey := s.team(t, "other.example.net")
	mint := func(k, sub, ip string) (id, name string) {
		r := s.must(201, "POST", "/api/v1/hostnames", k, map[string]any{"ip": ip, "subdomain": sub})
		return r.str("id"), r.str("hostname")
	}
	homeID, home := mint(key, "home", "198.41.0.4")
	_, office := mint(key, "office", "198.41.0.10")
	lanID, lan := mint(key, "lan", "10.0.0.1")
	goneID, gone := mint(key, "gone", "198.41.0.20")
	heldID, held := mint(key, "held", "198.41.0.30")
	_, theirs := mint(otherKey, "theirs", "198.41.0.40")
	s.must(200, "DELETE", "/api/v1/hostnames/"+goneID, key, nil)
	s.must(200, "POST", "/api/admin/hostnames/"+heldID+"/suspend", s.admin, nil)
	readKey := s.key(t, team, []map[string]any{{"scope": "hostnames:read"}})
	revoked := s.key(t, team, nil)
	s.must(200, "DELETE", "/api/admin/keys/"+strings.Split(revoked, "_")[1], s.admin, nil)

	twentyOne := strings.TrimSuffix(strings.Repeat(home+",", 21), ",")
	rows := []dynRow{
		{name: "good", key: key, query: "hostname=" + home + "&myip=198.41.0.5", want: "good 198.41.0.5", then: func(t *testing.T) {
			s.resolves(home, dns.TypeA, "198.41.0.5")
			s.live(t, key, homeID)
		}},
		{name: "nochg writes nothing", key: key, query: "hostname=" + home + "&myip=198.41.0.5", want: "nochg 198.41.0.5", then: func(t *testing.T) {
			// A write would make it pending again until the nameservers serve it.
			if st := s.must(200, "GET", "/api/v1/hostnames/"+homeID, key, nil).str("status"); st != "live" {
				t.Errorf("nochg left the hostname %s, want live (untouched)", st)
			}
		}},
		{name: "dual stack in myip", key: key, query: "hostname=" + home + "&myip=198.41.0.6,198.41.0.99,2606:4700::1",
			want: "good 198.41.0.6,2606:4700::1", then: func(t *testing.T) {
				s.resolves(home, dns.TypeA, "198.41.0.6")
				s.resolves(home, dns.TypeAAAA, "2606:4700::1")
			}},
		{name: "myip and myipv6", key: key, query: "hostname=" + home + "&myip=198.41.0.6&myipv6=2606:4700::1", want: "nochg 198.41.0.6,2606:4700::1"},
		// Routers that send each family in a request of its own keep both.
		{name: "IPv6 alone keeps the IPv4", key: key, query: "hostname=" + home + "&myipv6=2606:4700::2", want: "good 198.41.0.6,2606:4700::2", then: func(t *testing.T) {
			s.resolves(home, dns.TypeAAAA, "2606:4700::2")
			s.resolves(home, dns.TypeA, "198.41.0.6")
		}},
		{name: "/api/nic/update is the same; IPv4 alone keeps the IPv6", path: "/api/nic/update", key: key, query: "hostname=" + home + "&myip=198.41.0.7",
			want: "good 198.41.0.7,2606:4700::2"},
		// A Fritz!Box: update URL .../nic/update?hostname=<domain>&myip=<ipaddr>&myipv6=<ip6lanprefix>.
		{name: "Fritz!Box: IPv4 and the LAN prefix keep the interface identifier", key: key,
			query: "hostname=" + home + "&myip=198.41.0.7&myipv6=2606:4700:9:8::/64", want: "good 198.41.0.7,2606:4700:9:8::2"},
		// inadyn (its dyndns2 plugin) and OPNsense's ddclient send one address in myip, each family in turn.
		{name: "inadyn: the IPv6 in myip", key: key, query: "hostname=" + home + "&myip=2606:4700:9:8::5", want: "good 198.41.0.7,2606:4700:9:8::5"},
		{name: "inadyn: then the IPv4", key: key, query: "hostname=" + home + "&myip=198.41.0.6", want: "good 198.41.0.6,2606:4700:9:8::5"},
		{name: "a prefix on a name with no IPv6", key: key, query: "hostname=" + office + "&myipv6=2606:4700:9:8::/64", want: "badagent"},
		{name: "a prefix longer than /64", key: key, query: "hostname=" + home + "&myipv6=2606:4700:9:8::/96", want: "badagent"},
		{name: "several hostnames, in request order", key: key,
			query: "hostname=" + strings.Join([]string{office, theirs, "nope.dyn.example.net", "nodots", home}, ",") + "&myip=198.41.0.8",
			want:  "good 198.41.0.8\nnohost\nnohost\nnotfqdn\ngood 198.41.0.8,2606:4700:9:8::5", then: func(t *testing.T) {
				s.resolves(office, dns.TypeA, "198.41.0.8")
				s.resolves(theirs, dns.TypeA, "198.41.0.40")
			}},
		{name: "another team's key", key: otherKey, query: "hostname=" + home + "&myip=198.41.0.9", want: "nohost"},
		{name: "read-only key", key: readKey, query: "hostname=" + home + "&myip=198.41.0.9", want: "nohost"},
		{name: "released", key: key, query: "hostname=" + gone + "&myip=198.41.0.9", want: "nohost"},
		{name: "unserved domain", key: key, query: "hostname=home.example.com&myip=198.41.0.9", want: "nohost"},
		{name: "suspended", key: key, query: "hostname=" + held + "&myip=198.41.0.9", want: "abuse"},
		{name: "class crossing", key: key, query: "hostname=" + lan + "&myip=198.41.0.9", want: "dnserr"},
		{name: "class crossing in one family", key: key, query: "hostname=" + lan + "&myip=10.0.0.2,2606:4700::3", want: "dnserr"},
		{name: "no myip: the TCP peer", key: key, query: "hostname=" + lan, want: "good 127.0.0.1", then: func(t *testing.T) {
			s.resolves(lan, dns.TypeA, "127.0.0.1")
		}},
		{name: "X-Forwarded-For from an untrusted peer is ignored", key: key, query: "hostname=" + lan,
			header: map[string]string{"X-Forwarded-For": "10.7.7.7"}, want: "nochg 127.0.0.1"},
		{name: "no hostname", key: key, query: "myip=198.41.0.9", want: "notfqdn"},
		{name: "21 hostnames", key: key, query: "hostname=" + twentyOne + "&myip=198.41.0.9", want: "numhost"},
		{name: "not an address", key: key, query: "hostname=" + home + "&myip=198.41.0.300", want: "badagent"},
		{name: "not an address in myipv6", key: key, query: "hostname=" + home + "&myipv6=fe80::1%25eth0", want: "badagent"},
		{name: "wrong key", key: "svc_nope_nope", query: "hostname=" + home + "&myip=198.41.0.9", status: 401, want: "badauth"},
		{name: "no credentials", query: "hostname=" + home + "&myip=198.41.0.9", status: 401, want: "badauth"},
		{name: "revoked key", key: revoked, query: "hostname=" + home + "&myip=198.41.0.9", status: 401, want: "badauth"},
		{name: "bearer is not basic", query: "hostname=" + home, header: map[string]string{"Authorization": "Bearer " + key}, status: 401, want: "badauth"},
		{name: "myip endpoint", path: "/api/v1/myip", want: "127.0.0.1"},
		{name: "myip endpoint ignores an untrusted X-Forwarded-For", path: "/api/v1/myip", header: map[string]string{"X-Forwarded-For": "10.7.7.7"}, want: "127.0.0.1"},
	}
	runDyn(t, s, rows)
	if got := s.must(200, "GET", "/api/v1/hostnames/"+lanID, key, nil).str("ip"); got != "127.0.0.1" {
		t.Errorf("lan ip %s after the crossing attempts, want 127.0.0.1", got)
	}
}

// More than 60 updates a minute in a team: abuse, and the address stays.
func TestDynDNSRateLimit(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	_, key := s.team(t, "rate.example.net")
	r := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.1.1", "subdomain": "busy"})
	name := r.str("hostname")
	for i := range 60 {
		want := fmt.Sprintf("good 198.41.2.%d", i+1)
		if a := s.dyn(t, "/nic/update", key, fmt.Sprintf("hostname=%s&myip=198.41.2.%d", name, i+1), nil); a.body != want {
			t.Fatalf("update %d: %q, want %q", i+1, a.body, want)
		}
	}
	runDyn(t, s, []dynRow{
		{name: "61st update", key: key, query: "hostname=" + name + "&myip=198.41.3.1", want: "abuse"},
		// The same address again takes no token: nothing is written.
		{name: "nochg past the limit", key: key, query: "hostname=" + name + "&myip=198.41.2.60", want: "nochg 198.41.2.60"},
	})
	s.resolves(name, dns.TypeA, "198.41.2.60")
}

// Profile 1: one address per hostname, the plan gate, renewal on nochg.
func TestDynDNSP1(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	_, key := s.account("free")
	_, bizKey := s.account("business")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	id, name := h.str("id"), h.str("hostname")
	biz := s.must(201, "POST", "/api/v1/hostnames", bizKey, map[string]any{"ip": "10.0.0.1"}).str("hostname")
	expires := func() string { return s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil).str("expires_at") }
	var before string
	rows := []dynRow{
		{name: "good", key: key, query: "hostname=" + name + "&myip=198.41.0.5", want: "good 198.41.0.5", then: func(t *testing.T) {
			s.resolves(name, dns.TypeA, "198.41.0.5")
			before = expires()
			// Let the clock pass a millisecond, expires_at's resolution, so a
			// renewal shows (there is nothing to poll for here).
			time.Sleep(5 * time.Millisecond)
		}},
		{name: "nochg renews the idle expiry", key: key, query: "hostname=" + name + "&myip=198.41.0.5", want: "nochg 198.41.0.5", then: func(t *testing.T) {
			// expires_at is read back with millisecond precision.
			if after := expires(); after <= before {
				t.Errorf("expires_at %s after nochg, want later than %s", after, before)
			}
		}},
		{name: "IPv4 and IPv6: the IPv4", key: key, query: "hostname=" + name + "&myip=2606:4700::1,198.41.0.6", want: "good 198.41.0.6"},
		{name: "IPv6 alone", key: key, query: "hostname=" + name + "&myipv6=2606:4700::1", want: "good 2606:4700::1", then: func(t *testing.T) {
			s.resolves(name, dns.TypeAAAA, "2606:4700::1")
		}},
		{name: "private address on free", key: key, query: "hostname=" + name + "&myip=10.0.0.2", want: "!donator"},
		{name: "private address on business", key: bizKey, query: "hostname=" + biz + "&myip=10.0.0.2", want: "good 10.0.0.2"},
		{name: "another account's hostname", key: key, query: "hostname=" + biz + "&myip=198.41.0.9", want: "nohost"},
		{name: "wrong key", key: key + "x", query: "hostname=" + name, status: 401, want: "badauth"},
	}
	runDyn(t, s, rows)
}

// Behind a trusted proxy the right-most X-Forwarded-For entry that is not
// itself a trusted proxy is the client; the entries left of it could be
// written by anyone.
func TestDynDNSTrustedProxy(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2, extra: []string{"trusted_proxy 127.0.0.0/8 10.250.0.0/16"}})
	_, key := s.team(t, "proxied.example.net")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.0.0.1", "subdomain": "nas"}).str("hostname")
	xff := func(v string) map[string]string { return map[string]string{"X-Forwarded-For": v} }
	runDyn(t, s, []dynRow{
		{name: "forged left-most entry skipped", path: "/api/v1/myip", header: xff("10.6.6.6, 10.1.1.1, 10.250.0.9"), want: "10.1.1.1"},
		{name: "only trusted proxies: the left-most", path: "/api/v1/myip", header: xff("10.250.0.1, 10.250.0.2"), want: "10.250.0.1"},
		{name: "no header: the peer", path: "/api/v1/myip", want: "127.0.0.1"},
		{name: "update without myip", key: key, query: "hostname=" + name, header: xff("10.6.6.6, 10.1.1.3"), want: "good 10.1.1.3",
			then: func(t *testing.T) { s.resolves(name, dns.TypeA, "10.1.1.3") }},
		{name: "myip wins over the header", key: key, query: "hostname=" + name + "&myip=10.1.1.4", header: xff("10.1.1.5"), want: "good 10.1.1.4"},
		{name: "garbage from the proxy", key: key, query: "hostname=" + name, header: xff("not-an-address"), want: "badagent"},
	})
}

// With the database unreachable the answer is 911, which clients retry.
func TestDynDNSOutage(t *testing.T) {
	t.Parallel()
	dsn, p := viaProxy(t, storagetest.DSN(t, storage.Postgres))
	s := start(t, options{dialect: storage.Postgres, dsn: dsn, profile: 2})
	_, key := s.team(t, "down.example.net")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "upper"}).str("hostname")
	runDyn(t, s, []dynRow{{name: "before", key: key, query: "hostname=" + name + "&myip=198.41.0.5", want: "good 198.41.0.5"}})
	p.cut()
	runDyn(t, s, []dynRow{{name: "database cut", key: key, query: "hostname=" + name + "&myip=198.41.0.6", want: "911"}})
	p.restore(t)
	eventually(t, 10*time.Second, func() bool {
		return s.dyn(t, "/nic/update", key, "hostname="+name+"&myip=198.41.0.6", nil).body == "good 198.41.0.6"
	}, "no update after the database came back")
}

// ddclient, the Debian package, configured as the README says, keeps a
// hostname current.
func TestDynDNSDDClient(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("ddclient")
	if err != nil {
		t.Fatal("ddclient is not installed: run scripts/test-deps.sh")
	}
	s := start(t, options{profile: 2})
	_, key := s.team(t, "router.example.net")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "home"}).str("hostname")
	lan := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.0.0.1", "subdomain": "lan"}).str("hostname")
	u, _ := url.Parse(s.api)
	dir := t.TempDir()
	// run runs ddclient once for host; use is an address or a use= line.
	run := func(t *testing.T, password, host, use string) string {
		t.Helper()
		if !strings.HasPrefix(use, "use=") {
			use = "use=ip, ip=" + use
		}
		conf := filepath.Join(dir, host+".conf")
		text := strings.Join([]string{
			"daemon=0", "syslog=no", "protocol=dyndns2", "server=" + u.Host, "ssl=no",
			"login=anything", "password='" + password + "'", use, host, "",
		}, "\n")
		// The file holds the key: keep it the owner's, as the README says.
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(bin, "-daemon=0", "-noquiet", "-verbose", "-file", conf, "-cache", filepath.Join(dir, host+".cache")).CombinedOutput()
		return string(out)
	}
	out := run(t, key, name, "198.41.0.77")
	if !strings.Contains(out, "SUCCESS:  updating "+name+": good: IP address set to 198.41.0.77") {
		t.Fatalf("ddclient did not report the update:\n%s", out)
	}
	s.resolves(name, dns.TypeA, "198.41.0.77")
	// The second run finds the address in its cache and says so itself.
	if out := run(t, key, name, "198.41.0.77"); !strings.Contains(out, "skipped: IP address was already set to 198.41.0.77") {
		t.Errorf("second run did not report the address unchanged:\n%s", out)
	}
	// Without the cache it asks again, with a wrong key: 401 badauth,
	// which ddclient reports as an authorization failure.
	os.Remove(filepath.Join(dir, name+".cache"))
	if out := run(t, "svc_wrong_key", name, "198.41.0.78"); !strings.Contains(out, "FAILED:   updating "+name+": authorization failed") ||
		!strings.Contains(out, "badauth") {
		t.Errorf("a wrong key was not reported as an authorization failure:\n%s", out)
	}
	s.resolves(name, dns.TypeA, "198.41.0.77")
	// use=web with /api/v1/myip: ddclient learns its address from us (here
	// the loopback peer, so a private hostname).
	if out := run(t, key, lan, "use=web, web="+s.api+"/api/v1/myip"); !strings.Contains(out, "good: IP address set to 127.0.0.1") {
		t.Errorf("use=web with /api/v1/myip did not update:\n%s", out)
	}
	s.resolves(lan, dns.TypeA, "127.0.0.1")
	// A router's second ddclient run for its IPv6 keeps the IPv4 the first set.
	os.Remove(filepath.Join(dir, name+".cache"))
	if out := run(t, key, name, "2606:4700::77"); !strings.Contains(out, "good: IP address set to 2606:4700::77") {
		t.Errorf("ddclient with an IPv6 did not update:\n%s", out)
	}
	s.resolves(name, dns.TypeAAAA, "2606:4700::77")
	s.resolves(name, dns.TypeA, "198.41.0.77")
}

// A hostname released while dyndns2 updates for it are in flight: every
// update answers good (it came first) or nohost (it came after), never
// dnserr, whichever side of the release the hostname was found on.
func TestDynDNSReleaseRace(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	_, key := s.team(t, "race.example.net")
	for round := range 2 { // 2 x 25 updates stay under the team's 60 a minute
		r := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": fmt.Sprintf("race%d", round)})
		id, name := r.str("id"), r.str("hostname")
		var wg sync.WaitGroup
		answers := make([]string, 25)
		for i := range answers {
			wg.Go(func() {
				answers[i] = s.dyn(t, "/nic/update", key, fmt.Sprintf("hostname=%s&myip=198.41.1.%d", name, i+1), nil).body
			})
			if i == len(answers)/2 {
				wg.Go(func() { s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil) })
			}
		}
		wg.Wait()
		for _, a := range answers {
			if !strings.HasPrefix(a, "good ") && !strings.HasPrefix(a, "nochg ") && a != "nohost" {
				t.Errorf("an update racing the release answered %q, want good, nochg or nohost", a)
			}
		}
	}
}

// inadyn, the Debian package, with its custom dyndns2 provider as the
// README configures it, sends each family in a request of its own (its
// address from a command here, not from the internet): the hostname keeps
// both.
func TestDynDNSInadyn(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("inadyn")
	if err != nil {
		t.Fatal("inadyn is not installed: run scripts/test-deps.sh")
	}
	s := start(t, options{profile: 2})
	_, key := s.team(t, "inadyn.example.net")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "home"}).str("hostname")
	u, _ := url.Parse(s.api)
	dir := t.TempDir()
	run := func(addr string) string {
		conf := filepath.Join(dir, "inadyn.conf")
		text := strings.Join([]string{
			"allow-ipv6 = true",
			"custom hostmint {",
			`    username = "x"`,
			`    password = "` + key + `"`,
			`    ddns-server = "` + u.Host + `"`,
			`    ddns-path = "/nic/update?hostname=%h&myip=%i"`,
			"    ssl = false",
			`    hostname = "` + name + `"`,
			"}", "",
		}, "\n")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(bin, "--once", "--foreground", "--force", "-l", "debug", "-f", conf,
			"--cache-dir", dir, "-P", filepath.Join(dir, "inadyn.pid"), "-c", "echo "+addr).CombinedOutput()
		return string(out)
	}
	if out := run("198.41.0.55"); !strings.Contains(out, "good 198.41.0.55") {
		t.Fatalf("inadyn's IPv4 update:\n%s", out)
	}
	if out := run("2606:4700::55"); !strings.Contains(out, "good 198.41.0.55,2606:4700::55") {
		t.Fatalf("inadyn's IPv6 update:\n%s", out)
	}
	s.resolves(name, dns.TypeA, "198.41.0.55")
	s.resolves(name, dns.TypeAAAA, "2606:4700::55")
}
