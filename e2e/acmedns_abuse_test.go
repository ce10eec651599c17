package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
	"golang.org/x/crypto/bcrypt"
)

// Anonymous acme-dns callers cannot close the door on others: a flood of
// registrations from a few wide networks leaves room for new ones, and
// guessing passwords is throttled and tells nothing by its timing. The
// client's address comes from a trusted proxy's X-Forwarded-For, in any
// of the forms proxies write it.
//
// Helpers here are prefixed abuse so that they do not collide with those
// of other files of the package.

// abuseCall is one answer, read without failing the test (callers run in
// goroutines).
type abuseCall struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
	took   time.Duration
}

func (c abuseCall) code() string { s, _ := c.body["code"].(string); return s }

// abuseSend sends method path with header fields and body from behind the
// trusted proxy (loopback) for the client xff ("" for none).
func abuseSend(s *server, method, path, xff string, hdr map[string]string, body string) (abuseCall, error) {
	req, err := http.NewRequest(method, s.api+path, strings.NewReader(body))
	if err != nil {
		return abuseCall{}, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return abuseCall{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	c := abuseCall{status: resp.StatusCode, header: resp.Header, raw: string(raw), took: time.Since(start)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		json.Unmarshal(raw, &c.body)
	}
	return c, err
}

// abuseMust is abuseSend that fails t on a transport error.
func abuseMust(t *testing.T, s *server, method, path, xff string, hdr map[string]string, body string) abuseCall {
	t.Helper()
	c, err := abuseSend(s, method, path, xff, hdr, body)
	if err != nil {
		t.Fatalf("%s %s from %s: %v", method, path, xff, err)
	}
	return c
}

// abuseRegisterAll registers once from each of addrs, 8 at a time, and
// returns the answers in addrs' order.
func abuseRegisterAll(t *testing.T, s *server, addrs []string) []abuseCall {
	t.Helper()
	out := make([]abuseCall, len(addrs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				c, err := abuseSend(s, "POST", "/api/acme/register", addrs[i], nil, "")
				if err != nil {
					t.Errorf("register from %s: %v", addrs[i], err)
				}
				out[i] = c
			}
		})
	}
	for i := range addrs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// abuseRetryAfter fails unless c is 429 RATE_LIMITED with a Retry-After of
// 1 s to max.
func abuseRetryAfter(t *testing.T, what string, c abuseCall, max int) {
	t.Helper()
	secs, err := strconv.Atoi(c.header.Get("Retry-After"))
	if c.status != 429 || c.code() != "RATE_LIMITED" || err != nil || secs < 1 || secs > max {
		t.Fatalf("%s: %d %s with Retry-After %q, want 429 RATE_LIMITED with 1-%d s", what, c.status, c.raw, c.header.Get("Retry-After"), max)
	}
}

// abuseRegistrations is every registration the admin list shows.
func abuseRegistrations(t *testing.T, s *server) []acmeRegListed {
	t.Helper()
	var all []acmeRegListed
	for cursor := ""; ; {
		r := s.must(200, "GET", "/api/admin/acme-registrations?limit=500&cursor="+cursor, s.admin, nil)
		var page struct {
			Registrations []acmeRegListed `json:"registrations"`
			NextCursor    *string         `json:"next_cursor"`
		}
		if err := json.Unmarshal(r.raw, &page); err != nil {
			t.Fatalf("admin list %s: %v", r.raw, err)
		}
		all = append(all, page.Registrations...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}

// A flood of registrations from eight /16s (200 each, from ten /24s of 20)
// takes the hour's first 1 500 and is refused past them; the last 500 go
// to networks that have registered fewer than 20 this hour (twenty new
// /16s and five new /40s, 20 each), and past 2 000 nobody registers. No
// test hook lowers the limits: the 2 000 are made.
func TestACMEDNSRegisterReserve(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, acmeRegOptions(options{dialect: d, extra: []string{"trusted_proxy 127.0.0.0/8"}}))
			began := time.Now()

			var flood []string
			for k := 1; k <= 8; k++ {
				for j := range 10 {
					for n := 1; n <= 20; n++ {
						flood = append(flood, fmt.Sprintf("100.%d.%d.%d", k, j, n))
					}
				}
			}
			rand.Shuffle(len(flood), func(i, j int) { flood[i], flood[j] = flood[j], flood[i] })
			made := 0
			for i, c := range abuseRegisterAll(t, s, flood) {
				switch c.status {
				case 201:
					made++
				case 429:
					abuseRetryAfter(t, "a flood's registration past 1 500", c, 3600)
				default:
					t.Fatalf("register from %s: %d %s, want 201 or 429", flood[i], c.status, c.raw)
				}
			}
			if made != 1500 {
				t.Fatalf("the flood made %d registrations, want 1 500: the reserve's 500 are kept", made)
			}
			// A flooding /16 is refused from a /24 of its own that never
			// registered; the refusal says why.
			c := abuseMust(t, s, "POST", "/api/acme/register", "100.3.200.1", nil, "")
			abuseRetryAfter(t, "a flooding /16's registration from a new /24", c, 3600)
			if !strings.Contains(c.raw, "100.3.0.0/16") || !strings.Contains(c.raw, "kept for networks") {
				t.Fatalf("the reserve's refusal names neither the /16 nor the reserve: %s", c.raw)
			}

			// New networks still register, IPv4 and IPv6 alike, all 500 of
			// the reserve.
			var fresh []string
			for k := range 20 {
				for n := 1; n <= 20; n++ {
					fresh = append(fresh, fmt.Sprintf("45.%d.0.%d", k, n))
				}
			}
			for k := 1; k <= 5; k++ {
				for n := 1; n <= 20; n++ {
					fresh = append(fresh, fmt.Sprintf("2001:db8:%d00::%x", k, n))
				}
			}
			for i, c := range abuseRegisterAll(t, s, fresh) {
				if c.status != 201 {
					t.Fatalf("register from the new network of %s: %d %s, want 201", fresh[i], c.status, c.raw)
				}
			}

			// 2 000 in all: a new network, a flooding one and a new one's
			// second /24 are refused alike.
			var late []string
			for k := range 10 {
				late = append(late, fmt.Sprintf("46.%d.0.1", k))
			}
			late = append(late, "100.1.0.1", "45.0.1.1", "2001:db8:600::1")
			for i, c := range abuseRegisterAll(t, s, late) {
				abuseRetryAfter(t, "register from "+late[i]+" past 2 000 an hour", c, 3600)
			}

			regs := abuseRegistrations(t, s)
			bySource := map[string]int{}
			for _, r := range regs {
				p, err := netip.ParsePrefix(r.Source)
				if err != nil {
					t.Fatalf("registration %s: source %q is not a network", r.Username, r.Source)
				}
				wide, _ := p.Addr().Prefix(16)
				if p.Addr().Is6() {
					wide, _ = p.Addr().Prefix(40)
				}
				bySource[wide.String()]++
			}
			flooded := 0
			for k := 1; k <= 8; k++ {
				flooded += bySource[fmt.Sprintf("100.%d.0.0/16", k)]
			}
			if len(regs) != 2000 || flooded != 1500 {
				t.Fatalf("the store holds %d registrations, %d of them the flood's; want 2 000 and 1 500", len(regs), flooded)
			}
			t.Logf("%d registration calls in %v", len(flood)+1+len(fresh)+len(late), time.Since(began).Round(time.Millisecond))
		})
	}
}

// A trusted proxy that writes the client's port into X-Forwarded-For
// (ADDR:PORT, [V6]:PORT) or brackets an IPv6 address names that address:
// /api/v1/myip says it, a registration is counted by its network (its
// own bucket, not one for unknown callers), and an allowfrom that holds it
// lets its updates through. An entry that is no address at all stays
// unknown, as before: counted as "unknown", and no allowfrom holds it.
func TestACMEDNSForwardedPort(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, acmeRegOptions(options{dialect: d, extra: []string{"trusted_proxy 127.0.0.0/8"}}))
			for _, tc := range []struct {
				xff, addr, allow, source string
				also                     []string // other spellings of the same client
				outside                  string   // a client outside allow
			}{
				{"203.0.113.7:4711", "203.0.113.7", "203.0.113.0/24", "203.0.113.0/24", []string{"203.0.113.7", "203.0.113.8:1"}, "198.51.100.7:4711"},
				{"[2001:db8::7]:4711", "2001:db8::7", "2001:db8::/48", "2001:db8::/56", []string{"[2001:db8::7]", "2001:db8::7"}, "[2001:db8:1::7]:4711"},
			} {
				if c := abuseMust(t, s, "GET", "/api/v1/myip", tc.xff, nil, ""); c.status != 200 || strings.TrimSpace(c.raw) != tc.addr {
					t.Fatalf("myip with X-Forwarded-For %q: %d %q, want %s", tc.xff, c.status, c.raw, tc.addr)
				}
				c := abuseMust(t, s, "POST", "/api/acme/register", tc.xff, nil, `{"allowfrom":["`+tc.allow+`"]}`)
				if c.status != 201 {
					t.Fatalf("register with X-Forwarded-For %q: %d %s", tc.xff, c.status, c.raw)
				}
				user, pass, sub := c.body["username"].(string), c.body["password"].(string), c.body["subdomain"].(string)
				if got := abuseSource(t, s, user); got != tc.source {
					t.Fatalf("registration from %q counted by %q, want %s", tc.xff, got, tc.source)
				}
				update := func(xff string) abuseCall {
					return abuseMust(t, s, "POST", "/api/acme/update", xff, map[string]string{"X-Api-User": user, "X-Api-Key": pass},
						fmt.Sprintf(`{"subdomain":%q,"txt":%q}`, sub, acmeValue()))
				}
				for _, xff := range append([]string{tc.xff}, tc.also...) {
					if c := update(xff); c.status != 200 {
						t.Fatalf("update from %q with allowfrom %s: %d %s, want 200", xff, tc.allow, c.status, c.raw)
					}
				}
				for _, xff := range []string{tc.outside, ""} {
					if c := update(xff); c.status != 403 {
						t.Fatalf("update from %q with allowfrom %s: %d %s, want 403", xff, tc.allow, c.status, c.raw)
					}
				}
			}

			// Garbage from the proxy: no address, as before.
			const garbage = "203.0.113.7:notaport"
			c := abuseMust(t, s, "POST", "/api/acme/register", garbage, nil, `{"allowfrom":["203.0.113.0/24"]}`)
			if c.status != 201 {
				t.Fatalf("register with X-Forwarded-For %q: %d %s", garbage, c.status, c.raw)
			}
			user := c.body["username"].(string)
			if got := abuseSource(t, s, user); got != "unknown" {
				t.Fatalf("registration from %q counted by %q, want unknown", garbage, got)
			}
			u := abuseMust(t, s, "POST", "/api/acme/update", garbage, map[string]string{"X-Api-User": user, "X-Api-Key": c.body["password"].(string)},
				fmt.Sprintf(`{"subdomain":%q,"txt":%q}`, c.body["subdomain"], acmeValue()))
			if u.status != 403 {
				t.Fatalf("update from %q: %d %s, want 403 (no allowfrom holds an unknown address)", garbage, u.status, u.raw)
			}
		})
	}
}

// abuseSource is the network the admin list says user registered from.
func abuseSource(t *testing.T, s *server, user string) string {
	t.Helper()
	for _, r := range abuseRegistrations(t, s) {
		if r.Username == user {
			return r.Source
		}
	}
	t.Fatalf("admin list has no registration %s", user)
	return ""
}

// Guessing the password of a registration imported from acme-dns (a
// bcrypt hash at acme-dns's cost: abuseHashCost) is throttled: an address (an IPv6 /64 as one) that failed
// 10 times within a minute is refused 429 with Retry-After, even with the
// right password, while another address is served. And a refusal takes
// as long whichever way it failed: an unknown username, and a known one
// with a wrong password (Hostmint's own hash or an imported one), each
// cost one bcrypt comparison, so their median times are alike.
func TestACMEDNSImportedGuesses(t *testing.T) {
	t.Parallel()
	const (
		userA, subA, passA = "5e0c9a41-8f4b-4d2e-9b6a-2f1d7c3e8a01", "7b2e4c6d-1a3f-4e5b-8c7d-9e0f1a2b3c4d", "Kq3Rs_5TuVw7XyZa9Bc1De3Fg5Hi7Jk9Lm1No3Pq"
		userB, subB, passB = "6f1d0b52-9a5c-4e3f-8c7b-3e2f8d4f9b12", "8c3f5d7e-2b4a-4f6c-9d8e-0f1a2b3c4d5e", "Lr4St_6UvWx8YzAb0Cd2Ef4Gh6Ij8Kl0Mn2Op4Qr"
	)
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			src, db := acmeDNSStore(t, d)
			for _, r := range [][3]string{{userA, passA, subA}, {userB, passB, subB}} {
				h, err := bcrypt.GenerateFromPassword([]byte(r[1]), abuseHashCost)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(rebind(d, "INSERT INTO records (Username, Password, Subdomain, AllowFrom) VALUES (?, ?, ?, '[]')"), r[0], string(h), r[2]); err != nil {
					t.Fatal(err)
				}
			}
			dst := storagetest.DSN(t, d)
			if code, out := hostmint(t, "migrate", "-from", "acme-dns:"+storeArg(d, src), "-to", storeArg(d, dst), "-acme-dns-domain", acmeRegDomain); code != 0 {
				t.Fatalf("migrate: exit %d\n%s", code, out)
			}
			s := start(t, acmeRegOptions(options{dialect: d, dsn: dst, extra: []string{"trusted_proxy 127.0.0.0/8"}}))
			update := func(xff, user, pass, sub string) abuseCall {
				t.Helper()
				return abuseMust(t, s, "POST", "/api/acme/update", xff, map[string]string{"X-Api-User": user, "X-Api-Key": pass},
					fmt.Sprintf(`{"subdomain":%q,"txt":%q}`, sub, acmeValue()))
			}

			// Equal time, first (the throttle counts these too: one
			// address per call). Interleaved, so that the machine's load
			// falls on every path alike.
			native := abuseMust(t, s, "POST", "/api/acme/register", "198.18.0.1", nil, "")
			if native.status != 201 {
				t.Fatalf("register: %d %s", native.status, native.raw)
			}
			paths := []struct {
				name            string
				user, pass, sub string
				took            []time.Duration
			}{
				{name: "imported, wrong password", user: userB, pass: passB[:39] + "x", sub: subB},
				{name: "unknown username", user: "0d9a7c2e-3b1f-4a6d-8e5c-7f2b9a1d3c4e", pass: passB, sub: subB},
				{name: "Hostmint's own, wrong password", user: native.body["username"].(string), pass: "wrong", sub: native.body["subdomain"].(string)},
			}
			for i := range 21 {
				for p := range paths {
					c := update(fmt.Sprintf("192.0.2.%d", 3*i+p+1), paths[p].user, paths[p].pass, paths[p].sub)
					if c.status != 401 {
						t.Fatalf("%s: %d %s, want 401", paths[p].name, c.status, c.raw)
					}
					paths[p].took = append(paths[p].took, c.took)
				}
			}
			median := func(d []time.Duration) time.Duration { return slices.Sorted(slices.Values(d))[len(d)/2] }
			known := median(paths[0].took)
			for _, p := range paths {
				t.Logf("%s: median %v (of %d)", p.name, median(p.took), len(p.took))
			}
			// A bcrypt comparison is tens of ms; a refusal without one, 1 ms
			// or less. Half the imported path's median is a wide margin on a
			// loaded machine, and far above a path that skips it.
			for _, p := range paths[1:] {
				if m := median(p.took); m < known/2 {
					t.Fatalf("%s answers in %v (median), imported with a wrong password in %v: the username's existence shows", p.name, m, known)
				}
			}

			// The throttle: 10 wrong passwords from one address, then 429
			// for anything from it, the right password included.
			for i := range 10 {
				if c := update("198.51.100.10:4711", userA, passA[:39]+"x", subA); c.status != 401 {
					t.Fatalf("wrong password %d: %d %s, want 401", i+1, c.status, c.raw)
				}
			}
			abuseRetryAfter(t, "the 11th wrong password from one address", update("198.51.100.10", userA, passA[:39]+"x", subA), 60)
			abuseRetryAfter(t, "the right password from a throttled address", update("198.51.100.10", userA, passA, subA), 60)
			abuseRetryAfter(t, "an unknown username from a throttled address", update("198.51.100.10", "nobody", passA, "nobody"), 60)
			if c := update("198.51.100.11", userA, passA, subA); c.status != 200 {
				t.Fatalf("the right password from another address: %d %s, want 200", c.status, c.raw)
			}

			// An IPv6 /64 counts as one address.
			for i := range 10 {
				if c := update(fmt.Sprintf("[2001:db8:0:1::%x]:4711", i+1), userB, "wrong", subB); c.status != 401 {
					t.Fatalf("wrong password %d from the /64: %d %s, want 401", i+1, c.status, c.raw)
				}
			}
			abuseRetryAfter(t, "an 11th wrong password from another address of the /64", update("2001:db8:0:1::ffff", userB, "wrong", subB), 60)
			if c := update("2001:db8:0:2::1", userB, "wrong", subB); c.status != 401 {
				t.Fatalf("a wrong password from the next /64: %d %s, want 401", c.status, c.raw)
			}
			if c := update("2001:db8:0:2::1", userB, passB, subB); c.status != 200 {
				t.Fatalf("the right password from the next /64: %d %s, want 200", c.status, c.raw)
			}
			var stored string
			if err := openSQL(t, d, dst).QueryRow(rebind(d, "SELECT password_hash FROM acme_registrations WHERE id = ?"), userB).Scan(&stored); err != nil ||
				strings.HasPrefix(stored, "$2") {
				t.Fatalf("password hash after a matching update: %.7s… (%v), want Hostmint's own, not bcrypt", stored, err)
			}
		})
	}
}
