package dnsupdate_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// door is an Updater over a fresh store, with one account on the pro plan
// and one TSIG key of it (all scopes, the whole account).
type door struct {
	u       *dnsupdate.Updater
	store   *storage.Store
	key     string // the TSIG key's name
	ring    *accounts.Keyring
	accts   *accounts.Service
	account string
	stmts   *atomic.Int64 // the store's statements (CountStatements) since it opened
}

func newDoor(tb testing.TB, d storage.Dialect) *door {
	tb.Helper()
	ctx := context.Background()
	store := storagetest.Open(tb, d)
	stmts := store.CountStatements()
	k := make(seal.Key, 32)
	rand.Read(k)
	if _, err := domains.New(store, k).Create(ctx, domains.Input{Name: ptr("example.org")}); err != nil {
		tb.Fatal(err)
	}
	ring := accounts.NewKeyring(store, k)
	accts := accounts.New(store, profile.P1, nil).WithTSIG(k, ring)
	a, err := accts.Create(ctx, accounts.Input{Name: ptr("a"), Plan: ptr("pro")})
	if err != nil {
		tb.Fatal(err)
	}
	nk, err := accts.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ring.Load(ctx, store.Reader()); err != nil {
		tb.Fatal(err)
	}
	hs := hostnames.New(store, hostnames.Config{Profile: profile.P1, IdleExpiry: time.Hour}, slog.New(slog.DiscardHandler))
	return &door{u: dnsupdate.New(store, ring, hostnames.DefaultRules(hs), profile.P1), store: store, key: nk.Key.KeyName, ring: ring,
		accts: accts, account: a.ID, stmts: stmts}
}

func ptr(s string) *string { return &s }

// ruleCode is the code a rule's refusal begins its EDE text with.
var ruleCode = regexp.MustCompile(`^([A-Z_]+): `)

// msg builds an UPDATE of zone: prereqs and updates in presentation form.
func msg(tb testing.TB, zone string, prereqs, updates []string) *dns.Msg {
	tb.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	for _, s := range prereqs {
		m.Answer = append(m.Answer, rr(tb, s))
	}
	for _, s := range updates {
		m.Ns = append(m.Ns, rr(tb, s))
	}
	return m
}

// rr reads a record; "NAME ANY TYPE" and "NAME NONE TYPE" are the
// rdata-less forms of prerequisites and deletes.
func rr(tb testing.TB, s string) dns.RR {
	tb.Helper()
	f := strings.Fields(s)
	if len(f) == 3 && (f[1] == "ANY" || f[1] == "NONE") {
		f = []string{f[0], "0", f[1], f[2]}
	}
	if len(f) == 4 && (f[2] == "ANY" || f[2] == "NONE") {
		h := dns.RR_Header{Name: dns.Fqdn(f[0]), Rrtype: dns.StringToType[f[3]], Class: dns.StringToClass[f[2]]}
		return &dns.ANY{Hdr: h}
	}
	r, err := dns.NewRR(s)
	if err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return r
}

// wire is m as the server reads it from the wire.
func wire(tb testing.TB, m *dns.Msg) *dns.Msg {
	tb.Helper()
	b, err := m.Pack()
	if err != nil {
		tb.Fatal(err)
	}
	out := new(dns.Msg)
	if err := out.Unpack(b); err != nil {
		tb.Fatal(err)
	}
	return out
}

// send hands m to the door as the server does: read from the wire.
func (d *door) send(tb testing.TB, m *dns.Msg) dnsupdate.Answer {
	tb.Helper()
	a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", wire(tb, m))
	if err != nil {
		tb.Fatalf("Update: %v", err)
	}
	return a
}

// addr is the address the store serves for label, or "".
func (d *door) addr(tb testing.TB, label string) string {
	tb.Helper()
	dom, err := d.store.Reader().DomainByName(context.Background(), "example.org")
	if err != nil {
		tb.Fatal(err)
	}
	h, err := d.store.Reader().HostnameByLabel(context.Background(), dom.ID, label)
	if err != nil {
		return ""
	}
	return h.Addrs
}

func TestUpdate(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			if a := d.send(t, msg(t, "example.org", nil, []string{"web.example.org. 60 IN A 198.41.0.4"})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("mint: %v", a.EDE)
			}
			for _, tc := range []struct {
				name             string
				zone             string
				prereqs, updates []string
				rcode            int
				ede              string // in the Extended DNS Error's text
				web              string // web.example.org's address after it
			}{
				{name: "the same address again", updates: []string{"web.example.org. 60 IN A 198.41.0.4"}, web: "198.41.0.4"},
				{name: "delete what is not there", updates: []string{"web.example.org. 0 NONE A 198.41.0.5", "none.example.org. 0 ANY A"}, web: "198.41.0.4"},
				{name: "repoint", updates: []string{"web.example.org. 0 ANY A", "web.example.org. 60 IN AAAA 2606:4700::1"}, web: "2606:4700::1"},
				{name: "prerequisite yxdomain holds", prereqs: []string{"web.example.org ANY ANY"}, web: "2606:4700::1"},
				{name: "prerequisite nxdomain fails", prereqs: []string{"web.example.org NONE ANY"}, updates: []string{"web.example.org. 0 ANY AAAA"},
					rcode: dns.RcodeYXDomain, ede: "web.example.org is in use", web: "2606:4700::1"},
				{name: "prerequisite yxrrset fails", prereqs: []string{"web.example.org ANY A"}, rcode: dns.RcodeNXRrset, web: "2606:4700::1"},
				{name: "prerequisite nxrrset fails", prereqs: []string{"web.example.org NONE AAAA"}, rcode: dns.RcodeYXRrset, web: "2606:4700::1"},
				{name: "value prerequisite holds", prereqs: []string{"web.example.org. 0 IN AAAA 2606:4700::1"}, web: "2606:4700::1"},
				{name: "value prerequisite fails", prereqs: []string{"web.example.org. 0 IN AAAA 2606:4700::2"}, rcode: dns.RcodeNXRrset, web: "2606:4700::1"},
				{name: "two addresses", updates: []string{"web.example.org. 60 IN A 198.41.0.4"}, rcode: dns.RcodeRefused, ede: "has one address", web: "2606:4700::1"},
				{name: "a rule refuses: all or nothing", updates: []string{"web.example.org. 0 ANY AAAA", "web.example.org. 60 IN A 198.41.0.9", "new.example.org. 60 IN A 10.1.1.1"},
					rcode: dns.RcodeRefused, ede: "FORBIDDEN: private and reserved addresses need the Business plan", web: "2606:4700::1"},
				{name: "a bad label", updates: []string{"-bad-.example.org. 60 IN A 198.41.0.4"}, rcode: dns.RcodeRefused, ede: "BAD_REQUEST", web: "2606:4700::1"},
				{name: "not writable", updates: []string{"example.org. 60 IN TXT \"x\""}, rcode: dns.RcodeRefused, ede: "apex", web: "2606:4700::1"},
				{name: "not a type of a profile-1 hostname", updates: []string{"web.example.org. 60 IN MX 10 mx.example.net."}, rcode: dns.RcodeRefused, ede: "takes A and AAAA", web: "2606:4700::1"},
				{name: "outside the zone", updates: []string{"web.example.net. 60 IN A 198.41.0.4"}, rcode: dns.RcodeNotZone, web: "2606:4700::1"},
				{name: "a zone not served", zone: "example.net", updates: []string{"web.example.net. 60 IN A 198.41.0.4"}, rcode: dns.RcodeNotAuth, web: "2606:4700::1"},
				{name: "prerequisite with a TTL", prereqs: []string{"web.example.org. 60 IN AAAA 2606:4700::1"}, rcode: dns.RcodeFormatError, web: "2606:4700::1"},
				{name: "add of a meta type", updates: []string{"web.example.org. 60 IN ANY"}, rcode: dns.RcodeFormatError, web: "2606:4700::1"},
				{name: "class CH", updates: []string{"web.example.org. 60 CH TXT \"x\""}, rcode: dns.RcodeFormatError, web: "2606:4700::1"},
				{name: "value prerequisite without a value", prereqs: []string{"web.example.org. 0 IN AAAA"}, rcode: dns.RcodeFormatError, web: "2606:4700::1"},
				{name: "an unknown type", updates: []string{"web.example.org. 60 IN TYPE65280 \\# 1 00"}, rcode: dns.RcodeRefused, ede: "takes A and AAAA", web: "2606:4700::1"},
				{name: "challenge value", updates: []string{"_acme-challenge.web.example.org. 60 IN TXT \"" + strings.Repeat("v", 43) + "\""}, web: "2606:4700::1"},
				{name: "challenge value malformed", updates: []string{"_acme-challenge.web.example.org. 60 IN TXT \"short\""}, rcode: dns.RcodeRefused, ede: "43 characters", web: "2606:4700::1"},
				{name: "release", updates: []string{"web.example.org. 0 ANY ANY"}, web: ""},
			} {
				zone := tc.zone
				if zone == "" {
					zone = "example.org"
				}
				a := d.send(t, msg(t, zone, tc.prereqs, tc.updates))
				if a.Rcode != tc.rcode {
					t.Errorf("%s: %s (%v), want %s", tc.name, dns.RcodeToString[a.Rcode], a.EDE, dns.RcodeToString[tc.rcode])
				}
				if tc.ede != "" && (a.EDE == nil || !strings.Contains(a.EDE.ExtraText, tc.ede)) {
					t.Errorf("%s: EDE %v, want it to say %q", tc.name, a.EDE, tc.ede)
				}
				// A rule's refusal names its code for the audit log, as the EDE text begins.
				if a.EDE != nil {
					if m := ruleCode.FindStringSubmatch(a.EDE.ExtraText); m != nil && a.Code != m[1] || m == nil && a.Code != "" {
						t.Errorf("%s: code %q for the EDE %q", tc.name, a.Code, a.EDE.ExtraText)
					}
				}
				if got := d.addr(t, "web"); got != tc.web {
					t.Errorf("%s: web.example.org serves %q, want %q", tc.name, got, tc.web)
				}
			}
			if got := d.addr(t, "new"); got != "" {
				t.Errorf("new.example.org was minted by a refused message: %q", got)
			}
		})
	}
}

// A message whose zone section is not one SOA question is FORMERR, and a
// key the ring does not hold (revoked) is refused before anything is read.
func TestUpdateRefusesEarly(t *testing.T) {
	t.Parallel()
	d := newDoor(t, storage.SQLite)
	m := msg(t, "example.org", nil, []string{"web.example.org. 60 IN A 198.41.0.4"})
	m.Question[0].Qtype = dns.TypeA
	if a := d.send(t, m); a.Rcode != dns.RcodeFormatError {
		t.Errorf("zone section of type A: %s", dns.RcodeToString[a.Rcode])
	}
	m = msg(t, "example.org", nil, nil)
	for range dnsupdate.MaxUpdates + 1 {
		m.Ns = append(m.Ns, rr(t, "web.example.org. 60 IN A 198.41.0.4"))
	}
	if a := d.send(t, m); a.Rcode != dns.RcodeFormatError {
		t.Errorf("%d updates: %s", len(m.Ns), dns.RcodeToString[a.Rcode])
	}
	if _, err := d.u.Update(context.Background(), signedBy("nobody.tsig."), "127.0.0.1:53", msg(t, "example.org", nil, nil)); err == nil {
		t.Error("a key that is not in the ring was taken")
	}
}

// BenchmarkUpdate is the door's cost over the rule it stands for: a
// repoint (delete A, add A) of one hostname, with the statements it sends.
func BenchmarkUpdate(b *testing.B) {
	for _, dialect := range storagetest.Dialects {
		b.Run(string(dialect), func(b *testing.B) {
			d := newDoor(b, dialect)
			if a := d.send(b, msg(b, "example.org", nil, []string{"bench.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
				b.Fatalf("mint: %v", a.EDE)
			}
			ms := []*dns.Msg{
				wire(b, msg(b, "example.org", nil, []string{"bench.example.org. 0 ANY A", "bench.example.org. 60 IN A 198.41.0.2"})),
				wire(b, msg(b, "example.org", nil, []string{"bench.example.org. 0 ANY A", "bench.example.org. 60 IN A 198.41.0.1"})),
			}
			stmts := d.stmts
			stmts.Store(0)
			i := 0
			for b.Loop() {
				a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", ms[i%2])
				if err != nil || a.Rcode != dns.RcodeSuccess {
					b.Fatalf("repoint: %v %v", err, a.EDE)
				}
				i++
			}
			b.ReportMetric(float64(stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}

// BenchmarkMintOneAccount mints hostnames (an A at a new label) into one
// account from 16 callers at once: their messages share batches
// (storage/group.go), and ns/op is the account's time per message.
func BenchmarkMintOneAccount(b *testing.B) {
	for _, dialect := range storagetest.Dialects {
		b.Run(string(dialect), func(b *testing.B) {
			d := newDoor(b, dialect)
			limit := 10_000_000
			if _, err := d.accts.Patch(context.Background(), d.account, accounts.Input{Cap: &limit}); err != nil {
				b.Fatal(err)
			}
			stmts := d.stmts
			stmts.Store(0)
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1))
					m := wire(b, msg(b, "example.org", nil, []string{fmt.Sprintf("mint%d.example.org. 60 IN A 198.41.%d.%d", i, i/250%250, i%250+1)}))
					a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", m)
					if err != nil || a.Rcode != dns.RcodeSuccess {
						b.Errorf("mint: %v %v", err, a.EDE)
						return
					}
				}
			})
			b.ReportMetric(float64(stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}

// Concurrent UPDATE messages of one account on PostgreSQL share batches
// whose first reads (each message's name) are made together
// (storage.Expect): under one statement a message, mints and repoints.
func TestOneAccountReadsAhead(t *testing.T) {
	t.Parallel()
	d := newDoor(t, storage.Postgres) // SQLite's statements are no round trips
	// The zone's row, read once and kept (Updater.zone).
	if a := d.send(t, msg(t, "example.org", nil, []string{"warm.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
		t.Fatalf("mint: %v", a.EDE)
	}
	const callers = 16
	stmts := d.stmts
	perMessage := func(round int, updates func(i int) []string) float64 {
		stmts.Store(0)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			m := wire(t, msg(t, "example.org", nil, updates(i)))
			wg.Go(func() {
				<-start
				a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", m)
				if err != nil || a.Rcode != dns.RcodeSuccess {
					t.Errorf("round %d, message %d: %v %v", round, i, err, a.EDE)
				}
			})
		}
		close(start)
		wg.Wait()
		return float64(stmts.Load()) / callers
	}
	for round := range 3 {
		name := func(i int) string { return fmt.Sprintf("ahead%d-%d.example.org.", round, i) }
		mints := perMessage(round, func(i int) []string {
			return []string{fmt.Sprintf("%s 60 IN A 198.41.%d.%d", name(i), round, i+1)}
		})
		repoints := perMessage(round, func(i int) []string {
			return []string{name(i) + " 0 ANY A", fmt.Sprintf("%s 60 IN A 198.41.%d.%d", name(i), round+10, i+1)}
		})
		if mints >= 1 || repoints >= 1 {
			t.Errorf("round %d: %.2f statements a mint, %.2f a repoint, want under 1", round, mints, repoints)
		}
		t.Logf("round %d: %.2f statements a mint, %.2f a repoint", round, mints, repoints)
	}
}

// The parts of one message see each other's writes: a cap counts the
// hostnames minted earlier in the same message.
func TestUpdateCapInOneMessage(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			limit := 2
			if _, err := d.accts.Patch(context.Background(), d.account, accounts.Input{Cap: &limit}); err != nil {
				t.Fatal(err)
			}
			a := d.send(t, msg(t, "example.org", nil, []string{"one.example.org. 60 IN A 198.41.0.1",
				"two.example.org. 60 IN A 198.41.0.2", "three.example.org. 60 IN A 198.41.0.3"}))
			if a.Rcode != dns.RcodeRefused || a.EDE == nil || !strings.Contains(a.EDE.ExtraText, "RATE_LIMITED") && !strings.Contains(a.EDE.ExtraText, "cap") {
				t.Errorf("three mints past a cap of 2: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
			}
			for _, l := range []string{"one", "two", "three"} {
				if got := d.addr(t, l); got != "" {
					t.Errorf("%s was minted by a refused message: %s", l, got)
				}
			}
			if a := d.send(t, msg(t, "example.org", nil, []string{"one.example.org. 60 IN A 198.41.0.1", "two.example.org. 60 IN A 198.41.0.2"})); a.Rcode != dns.RcodeSuccess {
				t.Errorf("two mints within the cap: %v", a.EDE)
			}
		})
	}
}

// Messages whose prerequisite holds for only one of them at a time are
// applied one at a time: of 8 that each require the address the others
// replace, exactly one is applied.
func TestUpdatePrerequisitesAtomic(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			if a := d.send(t, msg(t, "example.org", nil, []string{"race.example.org. 60 IN A 198.41.0.4"})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("mint: %v", a.EDE)
			}
			const callers = 8
			rcodes := make([]int, callers)
			var wg sync.WaitGroup
			for i := range callers {
				m := wire(t, msg(t, "example.org", []string{"race.example.org. 0 IN A 198.41.0.4"},
					[]string{"race.example.org. 0 ANY A", fmt.Sprintf("race.example.org. 60 IN A 198.41.1.%d", i+1)}))
				wg.Go(func() {
					a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", m)
					if err != nil {
						t.Error(err)
					}
					rcodes[i] = a.Rcode
				})
			}
			wg.Wait()
			applied := 0
			for _, rc := range rcodes {
				switch rc {
				case dns.RcodeSuccess:
					applied++
				case dns.RcodeNXRrset:
				default:
					t.Errorf("rcode %s, want NOERROR or NXRRSET", dns.RcodeToString[rc])
				}
			}
			if applied != 1 {
				t.Errorf("%d of %d messages applied, want exactly 1: %v", applied, callers, rcodes)
			}
		})
	}
}

// macs numbers the signatures signedBy makes: each message a MAC of its own.
var macs atomic.Uint64

// signedBy is a TSIG record of key (hmac-sha256) as a server verified it,
// signed now with a MAC no other message has.
func signedBy(key string) *dns.TSIG {
	return &dns.TSIG{Hdr: dns.RR_Header{Name: key, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: dns.HmacSHA256, TimeSigned: uint64(time.Now().Unix()), Fudge: 300,
		MAC: fmt.Sprintf("%064x", macs.Add(1)), MACSize: 32}
}
