package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	stdlog "log"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-acme/lego/v4/challenge/dns01"
	legolog "github.com/go-acme/lego/v4/log"
	"github.com/go-acme/lego/v4/providers/dns/acmedns"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// acme-dns registrations: with `acme_dns_domain NAME` anyone may POST
// /api/acme/register and get an acme-dns account whose challenge values are
// served at <uuid>.NAME; a customer points _acme-challenge.<their name> at
// it with a CNAME in their own zone. Tested the user's way (lego's acme-dns
// provider registering, then obtaining a certificate from Pebble, which
// resolves through Unbound that follows the CNAME from the customer's Knot
// into Hostmint), and at the API: allowfrom, the admin list and delete, the
// per-network limit, and the DNS answers. Nothing leaves 127.0.0.1.
//
// Helpers here are prefixed acmeReg so that they do not collide with those
// of other files of the package.

// acmeRegDomain is the NAME the tests configure: below the harness's
// example.org.
const acmeRegDomain = "auth.example.org"

// acmeRegOptions is a server issuing registrations under acmeRegDomain.
func acmeRegOptions(o options) options {
	o.extra = append(o.extra, "acme_dns_domain "+acmeRegDomain)
	return o
}

// acmeRegUUID is the form of a registration's subdomain.
var acmeRegUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// acmeRegAccount is a registration as /api/acme/register hands it out.
type acmeRegAccount struct {
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	Fulldomain string   `json:"fulldomain"`
	Subdomain  string   `json:"subdomain"`
	AllowFrom  []string `json:"allowfrom"`
}

// acmeRegister registers with allowfrom (no body when nil) and checks the
// answer's shape.
func (s *server) acmeRegister(t *testing.T, allowfrom []string) acmeRegAccount {
	t.Helper()
	var body any
	if allowfrom != nil {
		body = map[string]any{"allowfrom": allowfrom}
	}
	r := s.do("POST", "/api/acme/register", "", body)
	if r.status != 201 {
		t.Fatalf("POST /api/acme/register %q: status %d, want 201: %s", allowfrom, r.status, r.raw)
	}
	var a acmeRegAccount
	if err := json.Unmarshal(r.raw, &a); err != nil {
		t.Fatalf("register answer %s: %v", r.raw, err)
	}
	if _, ok := r.body["allowfrom"].([]any); !ok {
		t.Fatalf("register answer %s: allowfrom is not a JSON array", r.raw)
	}
	want := allowfrom
	if want == nil {
		want = []string{}
	}
	if a.Username == "" || a.Password == "" || !acmeRegUUID.MatchString(a.Subdomain) ||
		a.Fulldomain != a.Subdomain+"."+acmeRegDomain || !slices.Equal(a.AllowFrom, want) {
		t.Fatalf("register %q: answer %s", allowfrom, r.raw)
	}
	return a
}

// update publishes value with a's credentials (password pass when not "").
func (s *server) acmeRegUpdate(t *testing.T, a acmeRegAccount, pass, value string) response {
	t.Helper()
	if pass == "" {
		pass = a.Password
	}
	body, _ := json.Marshal(map[string]string{"subdomain": a.Subdomain, "txt": value})
	return s.acmeSend(t, "POST", "/api/acme/update",
		map[string]string{"X-Api-User": a.Username, "X-Api-Key": pass, "Content-Type": "application/json"}, string(body))
}

// acmeRegTXT is the TXT data at name over UDP and their TTLs; it fails
// unless the answer is NOERROR or NXDOMAIN, and reports which.
func (s *server) acmeRegTXT(t *testing.T, name string) (txt []string, ttls []uint32, nx bool) {
	t.Helper()
	m := s.query(name, dns.TypeTXT, "udp")
	switch m.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		nx = true
	default:
		t.Fatalf("%s TXT: rcode %s", name, dns.RcodeToString[m.Rcode])
	}
	if !m.Authoritative {
		t.Fatalf("%s TXT: answer is not authoritative: %v", name, m)
	}
	for _, rr := range m.Answer {
		if v, ok := rr.(*dns.TXT); ok {
			txt = append(txt, strings.Join(v.Txt, ""))
			ttls = append(ttls, v.Hdr.Ttl)
		}
	}
	slices.Sort(txt)
	return txt, ttls, nx
}

// acmeRegNoTXT fails unless name serves no TXT (NXDOMAIN or NODATA).
func (s *server) acmeRegNoTXT(t *testing.T, name, when string) {
	t.Helper()
	if txt, _, _ := s.acmeRegTXT(t, name); len(txt) != 0 {
		t.Fatalf("%s: %s TXT serves %q, want nothing", when, name, txt)
	}
}

// acmeRegNoData fails unless name answers qtype with NOERROR and no answer
// (an empty non-terminal), over UDP and TCP.
func (s *server) acmeRegNoData(t *testing.T, name string, qtype uint16) {
	t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		m := s.query(name, qtype, proto)
		if m.Rcode != dns.RcodeSuccess || len(m.Answer) != 0 || !m.Authoritative {
			t.Fatalf("%s %s over %s: want an authoritative NOERROR with no answer (NODATA), got\n%v",
				name, dns.TypeToString[qtype], proto, m)
		}
	}
}

// acmeRegListed is a registration as the admin list shows it.
type acmeRegListed struct {
	Username   string   `json:"username"`
	Subdomain  string   `json:"subdomain"`
	Fulldomain string   `json:"fulldomain"`
	AllowFrom  []string `json:"allowfrom"`
	Source     string   `json:"source"`
	CreatedAt  any      `json:"created_at"`
	UsedAt     any      `json:"used_at"`
}

// acmeRegList reads the admin list's first page; it fails on a cursor
// (the tests make few registrations) or a password in the answer.
func (s *server) acmeRegList(t *testing.T) map[string]acmeRegListed {
	t.Helper()
	r := s.must(200, "GET", "/api/admin/acme-registrations", s.admin, nil)
	var page struct {
		Registrations []acmeRegListed `json:"registrations"`
		NextCursor    *string         `json:"next_cursor"`
	}
	if err := json.Unmarshal(r.raw, &page); err != nil {
		t.Fatalf("admin list %s: %v", r.raw, err)
	}
	if _, ok := r.body["next_cursor"]; !ok || page.NextCursor != nil {
		t.Fatalf("admin list: next_cursor should be null on a short list: %s", r.raw)
	}
	if strings.Contains(strings.ToLower(string(r.raw)), "password") {
		t.Fatalf("admin list shows passwords: %s", r.raw)
	}
	out := map[string]acmeRegListed{}
	for i, reg := range page.Registrations {
		var fields map[string]any
		raw, _ := json.Marshal(r.body["registrations"].([]any)[i])
		json.Unmarshal(raw, &fields)
		for _, k := range []string{"username", "subdomain", "fulldomain", "allowfrom", "source", "created_at", "used_at"} {
			if _, ok := fields[k]; !ok {
				t.Fatalf("admin list: registration without %q: %s", k, raw)
			}
		}
		out[reg.Username] = reg
	}
	return out
}

// acmeRegCode fails unless r has status and error code.
func acmeRegCode(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.str("code") != code || r.str("error") == "" {
		t.Fatalf("%s: got %d %s, want %d with code %s and an error message", what, r.status, r.raw, status, code)
	}
}

// acmeRegConfirm checks that a's listing matches what register handed out.
func acmeRegConfirm(t *testing.T, list map[string]acmeRegListed, a acmeRegAccount) {
	t.Helper()
	l, ok := list[a.Username]
	if !ok {
		t.Fatalf("admin list has no registration %s: %v", a.Username, list)
	}
	// The source is the caller's address or the network it is counted by.
	src, err := netip.ParsePrefix(l.Source)
	if err != nil {
		src, err = netip.ParsePrefix(l.Source + "/32")
	}
	if l.Subdomain != a.Subdomain || l.Fulldomain != a.Fulldomain || !slices.Equal(l.AllowFrom, a.AllowFrom) ||
		err != nil || !src.Contains(netip.MustParseAddr("127.0.0.1")) || l.CreatedAt == nil || l.UsedAt == nil {
		t.Fatalf("admin list shows %+v for %+v (want a source holding 127.0.0.1, created_at and used_at)", l, a)
	}
}

// Registration at the API on both stores: allowfrom is enforced at update,
// values are served at once at the fulldomain (the two newest, TTL 60), the
// admin list shows registrations and deleting one stops both its answers and
// its updates. NAME is an empty non-terminal. Without acme_dns_domain,
// register answers 501.
func TestACMEDNSRegisterAllowFrom(t *testing.T) {
	t.Parallel()
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		s := start(t, options{})
		r := s.do("POST", "/api/acme/register", "", nil)
		if r.status != 501 {
			t.Fatalf("POST /api/acme/register without acme_dns_domain: %d %s, want 501", r.status, r.raw)
		}
	})
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, acmeRegOptions(options{dialect: d}))
			s.acmeRegNoData(t, acmeRegDomain, dns.TypeTXT)

			// Registered for another network: refused from here, nothing served.
			away := s.acmeRegister(t, []string{"192.0.2.0/24"})
			r := s.acmeRegUpdate(t, away, "", acmeValue())
			acmeRegCode(t, "update from 127.0.0.1 of a registration for 192.0.2.0/24", r, 403, "FORBIDDEN")
			s.acmeRegNoTXT(t, away.Fulldomain, "after a refused update")

			// Registered for this network: served at once, the two newest.
			here := s.acmeRegister(t, []string{"127.0.0.0/8"})
			acmeRegConfirm(t, s.acmeRegList(t), here)
			values := []string{acmeValue(), acmeValue(), acmeValue()}
			for i, v := range values {
				r := s.acmeRegUpdate(t, here, "", v)
				if r.status != 200 || r.str("txt") != v || !strings.Contains(string(r.raw), `"`+v+`"`) {
					t.Fatalf("update %d: %d %s, want 200 {\"txt\":%q}", i, r.status, r.raw, v)
				}
				txt, ttls, _ := s.acmeRegTXT(t, here.Fulldomain)
				want := slices.Sorted(slices.Values(values[max(0, i-1) : i+1]))
				if !slices.Equal(txt, want) {
					t.Fatalf("after update %d: %s TXT %q, want %q (the two newest values)", i, here.Fulldomain, txt, want)
				}
				for _, ttl := range ttls {
					if ttl != 60 {
						t.Fatalf("%s TXT TTL %d, want 60", here.Fulldomain, ttl)
					}
				}
			}
			// The refused registration still serves nothing; a wrong
			// password is 401 and changes nothing.
			s.acmeRegNoTXT(t, away.Fulldomain, "after another registration's updates")
			wrong := "x" + here.Password[1:]
			if wrong == here.Password {
				wrong = "y" + here.Password[1:]
			}
			r = s.acmeRegUpdate(t, here, wrong, acmeValue())
			if r.status != 401 {
				t.Fatalf("update with a wrong password: %d %s, want 401", r.status, r.raw)
			}
			if txt, _, _ := s.acmeRegTXT(t, here.Fulldomain); !slices.Equal(txt, slices.Sorted(slices.Values(values[1:]))) {
				t.Fatalf("after a refused update %s TXT is %q", here.Fulldomain, txt)
			}
			// NAME stays an empty non-terminal beside its children.
			s.acmeRegNoData(t, acmeRegDomain, dns.TypeTXT)
			s.acmeRegNoData(t, acmeRegDomain, dns.TypeA)

			// Bad networks: 400, nothing registered.
			for _, bad := range [][]string{{"not-a-cidr"}, {"192.0.2.1"}, {"127.0.0.0/8", "2001:db8::/129"}} {
				r := s.do("POST", "/api/acme/register", "", map[string]any{"allowfrom": bad})
				acmeRegCode(t, fmt.Sprintf("register with allowfrom %q", bad), r, 400, "BAD_REQUEST")
			}
			for _, body := range []string{`{"allowfrom": "127.0.0.0/8"}`, `{"allowfrom": [`} {
				r := s.do("POST", "/api/acme/register", "", body)
				acmeRegCode(t, "register with body "+body, r, 400, "BAD_REQUEST")
			}

			// The admin list shows exactly the two.
			list := s.acmeRegList(t)
			if len(list) != 2 {
				t.Fatalf("admin list: %d registrations, want 2: %v", len(list), list)
			}
			acmeRegConfirm(t, list, away)
			acmeRegConfirm(t, list, here)
			if r := s.do("GET", "/api/admin/acme-registrations", "", nil); r.status != 401 {
				t.Fatalf("admin list without the admin token: %d %s, want 401", r.status, r.raw)
			}

			// Deleted: gone from DNS at once, updates 401, gone from the list.
			s.must(204, "DELETE", "/api/admin/acme-registrations/"+here.Username, s.admin, nil)
			s.acmeRegNoTXT(t, here.Fulldomain, "after the registration's deletion")
			if r := s.acmeRegUpdate(t, here, "", acmeValue()); r.status != 401 {
				t.Fatalf("update with a deleted registration: %d %s, want 401", r.status, r.raw)
			}
			s.acmeRegNoTXT(t, here.Fulldomain, "after an update with a deleted registration")
			if list := s.acmeRegList(t); len(list) != 1 {
				t.Fatalf("admin list after a deletion: %v, want only %s", list, away.Username)
			}
			if r := s.do("DELETE", "/api/admin/acme-registrations/"+here.Username, s.admin, nil); r.status != 404 {
				t.Fatalf("deleting a deleted registration: %d %s, want 404", r.status, r.raw)
			}
			s.acmeRegNoData(t, acmeRegDomain, dns.TypeTXT)
		})
	}
}

// Registrations per source network are limited: 20 an hour from one /24,
// the 21st is refused with Retry-After.
func TestACMEDNSRegisterLimit(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, acmeRegOptions(options{dialect: d}))
			// 40 at once: exactly 20 are made, however they interleave.
			var wg sync.WaitGroup
			var made atomic.Int32
			for range 40 {
				wg.Go(func() {
					if r := s.do("POST", "/api/acme/register", "", nil); r.status == 201 {
						made.Add(1)
					} else if r.status != 429 {
						t.Errorf("a concurrent registration: %d %s, want 201 or 429", r.status, r.raw)
					}
				})
			}
			wg.Wait()
			if made.Load() != 20 {
				t.Fatalf("%d of 40 concurrent registrations made, want exactly 20", made.Load())
			}
			r := s.do("POST", "/api/acme/register", "", nil)
			acmeRegCode(t, "the 21st registration from 127.0.0.1 within the hour", r, 429, "RATE_LIMITED")
			secs, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 3600 {
				t.Fatalf("429 with Retry-After %q, want seconds within the hour", r.header.Get("Retry-After"))
			}
			if list := s.acmeRegList(t); len(list) != 20 {
				t.Fatalf("admin list: %d registrations, want 20", len(list))
			}
		})
	}
}

// acmeRegUnbound runs Unbound on port of loopback, resolving
// customer.test at knot and example.org at hostmint and refusing
// everything else; its own queries go out from 127.0.0.1 only. Negative
// answers are cached for a second at most.
func acmeRegUnbound(t *testing.T, port int, knot, hostmint string) string {
	t.Helper()
	bin, err := exec.LookPath("unbound")
	if err != nil {
		t.Fatalf("unbound is not installed (run ./scripts/test-deps.sh): %v", err)
	}
	dir := t.TempDir()
	hints := filepath.Join(dir, "root.hints")
	if err := os.WriteFile(hints, []byte(". 3600000 IN NS loopback.root.\nloopback.root. 3600000 IN A 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(addr string) string { return strings.Replace(addr, ":", "@", 1) }
	conf := fmt.Sprintf(`server:
    interface: 127.0.0.1@%[2]d
    port: %[2]d
    do-ip6: no
    outgoing-interface: 127.0.0.1
    do-not-query-localhost: no
    access-control: 127.0.0.0/8 allow
    username: ""
    chroot: ""
    directory: "%[1]s"
    pidfile: "%[1]s/unbound.pid"
    use-syslog: no
    logfile: ""
    verbosity: 1
    num-threads: 1
    so-reuseport: no
    module-config: "iterator"
    root-hints: "%[3]s"
    cache-max-negative-ttl: 1
    domain-insecure: "customer.test"
    domain-insecure: "example.org"
    local-zone: "." refuse
    local-zone: "customer.test." transparent
    local-zone: "example.org." transparent
remote-control:
    control-enable: no
stub-zone:
    name: "customer.test"
    stub-addr: %[4]s
stub-zone:
    name: "example.org"
    stub-addr: %[5]s
`, dir, port, hints, at(knot), at(hostmint))
	path := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("unbound-checkconf", path).CombinedOutput(); err != nil {
		t.Fatalf("unbound-checkconf: %v\n%s\n%s", err, out, conf)
	}
	runSecondary(t, "unbound", dir, port, exec.Command(bin, "-d", "-c", path))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !within(10*time.Second, func() bool {
		m := askAt(addr, "www.customer.test", dns.TypeA)
		return m != nil && slices.Equal(addrs(m), []string{"127.0.0.1"})
	}) {
		t.Fatalf("unbound at %s never resolved www.customer.test", addr)
	}
	// The guard: a name outside both zones is refused, not looked up.
	if m := askAt(addr, "example.com", dns.TypeA); m == nil || m.Rcode != dns.RcodeRefused {
		t.Fatalf("unbound answered example.com with %v, want REFUSED", m)
	}
	return addr
}

// The user's way: lego's acme-dns provider, on an empty storage file,
// registers and stops with the CNAME to create; the customer adds it to
// their zone (Knot); lego run again with the same storage file obtains a
// certificate for www.customer.test and its wildcard from Pebble, which
// asks Unbound, which follows the CNAME from Knot into Hostmint.
//
// Not parallel: lego's recursive nameservers and DNS timeout are
// process-wide, and this test runs before the parallel ones resume.
func TestACMEDNSRegisterLego(t *testing.T) {
	const name = "www.customer.test"
	s := start(t, acmeRegOptions(options{profile: 1}))
	api := s.api + "/api/acme"

	// lego logs to the test's failure output, not the terminal.
	legoOut := new(dns01Output)
	legoLogger := legolog.Logger
	legolog.Logger = stdlog.New(legoOut, "", stdlog.Lmicroseconds)
	t.Cleanup(func() {
		legolog.Logger = legoLogger
		if t.Failed() {
			t.Logf("lego log:\n%s", legoOut)
		}
	})

	// Every lookup lego makes, from the first Present on, goes to the
	// resolver this test runs (not /etc/resolv.conf): its port is taken
	// now, Unbound starts once the zone holds the CNAME.
	knotPort := freePort(t)
	knotAddr := fmt.Sprintf("127.0.0.1:%d", knotPort)
	resolverPort := freePort(t)
	dns01.AddRecursiveNameservers([]string{fmt.Sprintf("127.0.0.1:%d", resolverPort)})(nil)
	dns01.AddDNSTimeout(5 * time.Second)(nil)

	// First run: no account for the name, so the provider registers.
	dir := t.TempDir()
	storagePath := filepath.Join(dir, "acme-dns.json")
	if err := os.WriteFile(storagePath, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &acmedns.Config{APIBase: api, StoragePath: storagePath}
	provider, err := acmedns.NewDNSProviderConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	presentErr := provider.Present(name, "token", "token.thumbprint")
	if !errors.As(presentErr, new(acmedns.ErrCNAMERequired)) {
		t.Fatalf("first Present: %v, want ErrCNAMERequired", presentErr)
	}
	stored, err := os.ReadFile(storagePath)
	if err != nil {
		t.Fatal(err)
	}
	var accounts map[string]struct {
		Fulldomain string `json:"fulldomain"`
		Subdomain  string `json:"subdomain"`
		Username   string `json:"username"`
		Password   string `json:"password"`
		ServerURL  string `json:"server_url"`
	}
	if err := json.Unmarshal(stored, &accounts); err != nil {
		t.Fatalf("storage file %s: %v", stored, err)
	}
	acct, ok := accounts[name]
	if len(accounts) != 1 || !ok || acct.Username == "" || acct.Password == "" || acct.ServerURL != api ||
		!acmeRegUUID.MatchString(acct.Subdomain) || acct.Fulldomain != acct.Subdomain+"."+acmeRegDomain {
		t.Fatalf("storage file after registering: %s", stored)
	}
	cname := fmt.Sprintf("_acme-challenge.%s. CNAME %s.", name, acct.Fulldomain)
	if !strings.Contains(presentErr.Error(), cname) {
		t.Fatalf("the provider's message does not name the CNAME %q:\n%v", cname, presentErr)
	}
	acmeRegConfirm(t, s.acmeRegList(t), acmeRegAccount{
		Username: acct.Username, Subdomain: acct.Subdomain, Fulldomain: acct.Fulldomain, AllowFrom: []string{}})

	// The customer's zone, with the CNAME, in Knot.
	knotDir := t.TempDir()
	zone := fmt.Sprintf(`$ORIGIN customer.test.
$TTL 60
@ SOA ns1 hostmaster 1 60 60 3600 1
@ NS ns1
ns1 A 127.0.0.1
www A 127.0.0.1
%s
`, strings.Replace(cname, "_acme-challenge.www.customer.test.", "_acme-challenge.www", 1))
	if err := os.WriteFile(filepath.Join(knotDir, "customer.test.zone"), []byte(zone), 0o600); err != nil {
		t.Fatal(err)
	}
	startKnot(t, knotDir, knotPort, knotConf(knotPort, knotDir, "127.0.0.1", "53", "zone:\n  - domain: customer.test\n"))
	if !within(10*time.Second, func() bool {
		m := askAt(knotAddr, "_acme-challenge."+name, dns.TypeCNAME)
		return m != nil && len(m.Answer) == 1
	}) {
		t.Fatalf("knot at %s never served the CNAME", knotAddr)
	}
	unboundAddr := acmeRegUnbound(t, resolverPort, knotAddr, s.dnsAddr)
	ca := dns01StartPebble(t, unboundAddr)

	// Second run: a provider on the same storage file, as lego run again.
	provider, err = acmedns.NewDNSProviderConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// lego's check asks the resolver (recursion desired) for the TXT
	// through the CNAME. Not RecursiveNSsPropagationRequirement: its second
	// question does not ask for recursion, which Unbound refuses; nor the
	// authoritative check, which would ask example.org's NS on port 53.
	res := legoObtain(t, ca, provider, []string{name, "*." + name},
		dns01.AddRecursiveNameservers([]string{unboundAddr}),
		dns01.AddDNSTimeout(5*time.Second),
		dns01.DisableAuthoritativeNssPropagationRequirement(),
	)
	dns01Check(t, ca, res.Certificate, name)

	// The resolver sees the two values of the order through the CNAME;
	// the provider registered nothing more.
	m := askAt(unboundAddr, "_acme-challenge."+name, dns.TypeTXT)
	var txt []string
	if m != nil {
		for _, rr := range m.Answer {
			if v, ok := rr.(*dns.TXT); ok && strings.EqualFold(v.Hdr.Name, acct.Fulldomain+".") {
				txt = append(txt, strings.Join(v.Txt, ""))
			}
		}
	}
	if len(txt) != 2 || txt[0] == txt[1] {
		t.Fatalf("unbound: _acme-challenge.%s TXT %v, want the CNAME and the two values of the order", name, m)
	}
	if after, err := os.ReadFile(storagePath); err != nil || string(after) != string(stored) {
		t.Fatalf("the storage file changed: %s (%v)", after, err)
	}
	if list := s.acmeRegList(t); len(list) != 1 {
		t.Fatalf("admin list: %v, want the one registration", list)
	}
}

// acme-dns's usual set-up: its name is a zone of its own, delegated to it.
// acme_dns_domain may be one of the block's domains: registrations are
// served right below its apex, the apex answers as any zone's, and no
// hostname is made on it (a create goes to the other pool domain, and a
// label on it is refused).
func TestACMEDNSDomainOfItsOwn(t *testing.T) {
	t.Parallel()
	const zone = "acme.test"
	s := start(t, options{profile: 1, extra: []string{"domain " + zone, "acme_dns_domain " + zone}})
	r := s.do("POST", "/api/acme/register", "", nil)
	full := r.str("fulldomain")
	if r.status != 201 || full != r.str("subdomain")+"."+zone {
		t.Fatalf("register: %d %s, want 201 and a name right below %s", r.status, r.raw, zone)
	}
	value := strings.Repeat("z", 43)
	u := s.acmeSend(t, "POST", "/api/acme/update", map[string]string{"X-Api-User": r.str("username"), "X-Api-Key": r.str("password")},
		fmt.Sprintf(`{"subdomain":%q,"txt":%q}`, r.str("subdomain"), value))
	if u.status != 200 {
		t.Fatalf("update: %d %s", u.status, u.raw)
	}
	if got := txtAt(s, full+"."); !slices.Equal(got, []string{value}) {
		t.Fatalf("TXT at %s: %v, want [%s]", full, got, value)
	}
	if m := s.query(zone, dns.TypeSOA, "udp"); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("SOA %s: %v", zone, m)
	}
	_, key := s.account("business")
	for i := range 5 {
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.0.%d", i+1)})
		if name := h.str("hostname"); !strings.HasSuffix(name, ".example.org") {
			t.Fatalf("a create went to %s, want the other pool domain (example.org)", name)
		}
	}
}
