package dnsupdate_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// diffState is what a role's writes leave.
type diffState struct {
	Counter, Live, Released                          int
	Records, Challenges, Credentials, Keys, TSIGKeys int
	Registrations, Served                            int // acme-dns's
}

func (w *diffWorld) state(t *testing.T) map[string]diffState {
	t.Helper()
	ctx := context.Background()
	q := w.nodes[0].store.Reader()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]diffState{}
	for role, a := range w.accts {
		var s diffState
		acct, err := q.Account(ctx, a.id)
		must(err)
		s.Counter = acct.ActiveHostnames
		hs, err := q.FindHostnames(ctx, storage.Filter{AccountID: a.id, Team: true}, 10_000, 0)
		must(err)
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.ID)
			switch h.Status {
			case storage.StatusLive:
				s.Live++
			case storage.StatusReleased:
				s.Released++
			}
			n, err := q.CountCredentials(ctx, h.ID)
			must(err)
			s.Credentials += n
		}
		rs, err := q.Records(ctx, ids...)
		must(err)
		cs, err := q.Challenges(ctx, ids...)
		must(err)
		ks, err := q.Keys(ctx, a.id)
		must(err)
		ts, err := q.TSIGKeys(ctx, a.id)
		must(err)
		s.Records, s.Challenges, s.Keys, s.TSIGKeys = len(rs), len(cs), len(ks), len(ts)
		out[role] = s
	}
	regs, err := q.Registrations(ctx, "", 10_000)
	must(err)
	var s diffState
	for _, r := range regs {
		s.Registrations++
		if r.TXTNew != "" {
			s.Served++
		}
	}
	out["acme-dns"] = s
	return out
}

func newDiffWorld(t *testing.T, d storage.Dialect) *diffWorld {
	t.Helper()
	ctx := context.Background()
	k := make(seal.Key, 32)
	rand.Read(k)
	dsn := storagetest.DSN(t, d)
	nodes := 1 // SQLite is one node's
	if d == storage.Postgres {
		nodes = 2
	}
	w := &diffWorld{accts: map[string]*diffAccount{}}
	for range nodes {
		st, err := storage.Open(ctx, d, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		hs := hostnames.New(st, hostnames.Config{Profile: profile.P1, IdleExpiry: time.Hour}, slog.New(slog.DiscardHandler))
		rules := hostnames.DefaultRules(hs)
		rules.Records = hostnames.NewRecords(hs, recordWrites)
		rules.Certificates = hostnames.NewCertificates(hs, nil, acmeUpdates).WithACMEDNS("acme.example.net")
		ring := accounts.NewKeyring(st, k)
		w.nodes = append(w.nodes, &diffNode{store: st, rules: rules, ring: ring,
			accts: accounts.New(st, profile.P1, nil).WithTSIG(k, ring), u: dnsupdate.New(st, ring, rules, profile.P1)})
	}
	n := w.nodes[0]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	w.dom, err = domains.New(n.store, k).Create(ctx, domains.Input{Name: ptr(diffZone)})
	must(err)
	// account makes a pro account (custom labels, no private addresses)
	// with a TSIG key and hosts hostnames labelled <role>-h<i>.
	account := func(role string, cap *int, hosts int) *diffAccount {
		a, err := n.accts.Create(ctx, accounts.Input{Name: ptr(role), Plan: ptr(plans.Pro), Cap: cap})
		must(err)
		tk, err := n.accts.CreateTSIGKey(ctx, a.ID, nil, accounts.TSIGInput{})
		must(err)
		da := &diffAccount{id: a.ID, tsig: tk.Key.KeyName + ".", p: &access.Principal{AccountID: a.ID, KeyID: "k-" + role, Scopes: access.All()}}
		for i := range hosts {
			h, err := n.rules.Lifecycle.Create(ctx, da.p, hostnames.CreateInput{IP: w.addr(), Label: ptr(fmt.Sprintf("%s-h%d", role, i))})
			must(err)
			da.hosts = append(da.hosts, h)
		}
		w.accts[role] = da
		return da
	}
	credential := func(a *diffAccount, h int) {
		c, err := n.rules.Certificates.CreateCredential(ctx, a.p, a.hosts[h].ID)
		must(err)
		a.creds = append(a.creds, c)
	}
	for i := range 4 {
		a := account(fmt.Sprintf("busy%d", i), nil, 9)
		credential(a, 0)
		for j := range 3 {
			r, err := n.rules.Records.CreateRecord(ctx, a.p, a.hosts[1].ID, txt(fmt.Sprintf("busy%d-r%d", i, j)))
			must(err)
			a.recs = append(a.recs, r)
		}
	}
	three, small := 3, smallCap
	account("capped", &three, 0)
	account("rate-create", &small, 0)
	account("rate-update", &small, 9)
	lim := account("limits", nil, 5)
	for range accounts.MaxKeys - 3 {
		_, err := n.accts.CreateKey(ctx, lim.id, accounts.KeyInput{Operator: true})
		must(err)
	}
	for range accounts.MaxTSIGKeys - 3 { // and its own
		_, err := n.accts.CreateTSIGKey(ctx, lim.id, nil, accounts.TSIGInput{})
		must(err)
	}
	for range hostnames.MaxCredentials - 2 {
		credential(lim, 0)
	}
	credential(lim, 1)
	s := account("suspended", nil, 16)
	for _, h := range []int{6, 7, 14, 15} {
		credential(s, h)
	}
	for i := range 2 {
		r, err := n.rules.Certificates.Register(ctx, netip.AddrFrom4([4]byte{203, 0, 113, byte(i + 1)}), nil)
		must(err)
		w.regs = append(w.regs, r)
	}
	for _, n := range w.nodes {
		must(n.ring.Load(ctx, n.store.Reader()))
	}
	// The rules size an account's buckets by its cap (hostnames/limits.go),
	// and so does this.
	drain(t, n.store, w.accts["rate-create"].id, "create", plans.CreatesPerHour(smallCap), 4)
	drain(t, n.store, w.accts["rate-update"].id, "update", plans.UpdatesPerHour(smallCap), 5)
	w.drained = time.Now()
	return w
}

// drain charges an account's bucket of kind (size an hour) until left
// tokens remain: for the next refill interval, exactly left more actions
// pass.
func drain(t *testing.T, st *storage.Store, accountID, kind string, size, left int) {
	t.Helper()
	b := ratelimit.Bucket{Kind: kind, Size: size, Period: time.Hour, What: kind}
	_, err := st.Write(context.Background(), func(ctx context.Context, tx *storage.Tx) error {
		now := time.Now()
		for range size - left {
			ratelimit.Charge(tx, accountID, b, now)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// addr is a public address no other write of the world uses: what a
// hostname points at tells which write stored it.
func (w *diffWorld) addr() *string {
	w.n++
	return ptr(fmt.Sprintf("23.%d.%d.%d", w.n>>16&255, w.n>>8&255, w.n&255))
}

// challenge is a DNS-01 value no other write uses.
func (w *diffWorld) challenge() string {
	w.n++
	return fmt.Sprintf("%043d", w.n)
}

func txt(s string) records.Input { return records.Input{Type: "TXT", Text: []byte(`"` + s + `"`)} }

// outcome is a rule's answer as the runs compare it: ok, or its code.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if p, ok := apierror.As(err); ok {
		return p.Code
	}
	return "error: " + err.Error() // unlike in the other run, and never wanted
}

// dnsOutcome is an UPDATE's answer so: ok, the rule's code, or the rcode.
func dnsOutcome(a dnsupdate.Answer, err error) string {
	switch {
	case errors.Is(err, dnsupdate.ErrBadKey):
		return dns.RcodeToString[dns.RcodeNotAuth]
	case err != nil:
		return "error: " + err.Error()
	case a.Rcode == dns.RcodeSuccess:
		return "ok"
	case a.Code != "":
		return a.Code
	}
	return dns.RcodeToString[a.Rcode]
}
