package dnsupdate_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
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

// The write pipeline's differential test (storage/group.go). A batch runs
// its writes as savepoints of one transaction, puts its new hostnames off
// to its last statement on PostgreSQL, counting them in for the parts
// after, and charges rate limits only in that statement: none of that may
// show. So one fixed scenario of the
// rules that write runs twice, on stores set up alike: once with each
// write alone (storage.Alone), one after the other, which is the
// reference; once from many goroutines at once, so that an account's
// writes share batches with each other and with other accounts'. Both must
// answer the same, counted per account and kind (a batch reorders writes,
// so orders are not compared), and leave the same state. Where a limit
// decides which writes pass, the reference must also admit exactly what
// the limit allows: a check lost in both runs would otherwise pass.
//
// On PostgreSQL a second node shares the database, as in production: one
// node's pipeline runs an account's writes in one lane, one batch after
// the other, so it is across nodes that a count read without its lock
// would be passed, and that batches taking rows in opposite orders would
// deadlock.
//
// Profile 1 throughout. Records are profile 2's at the doors, but their
// rule and its writes do not depend on the profile, and a profile-1
// hostname is live from its create, which is all they ask.

const (
	diffWorkers  = 24
	diffZone     = "example.org"
	recordWrites = 12 // record writes a team makes a minute
	acmeUpdates  = 6  // DNS-01 updates a credential or a key makes a minute
	// smallCap gives an account the smallest token buckets, so the longest
	// refill: a drained bucket's count stays exact for longest.
	smallCap = 25
)

// The refill intervals of smallCap's buckets (hostnames/limits.go).
var (
	createInterval = time.Hour / time.Duration(plans.CreatesPerHour(smallCap))
	updateInterval = time.Hour / time.Duration(plans.UpdatesPerHour(smallCap))
)

func TestPipelineDiff(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ref := runDiff(t, d, false)
			got := runDiff(t, d, true)
			compareDiff(t, ref, got)
		})
	}
}

// diffLimit is a limit the scenario meets: of the writes of role and kind,
// exactly ok pass and the others are refused with refused.
type diffLimit struct {
	role, kind string
	ok         int
	refused    string
}

// The kinds of the limited writes. Where API creates and UPDATE mints (or
// API and UPDATE repoints) share a limit, which of them pass is the
// order's, so they are counted as one kind.
const (
	limCap           = "create or mint, cap 3"
	limCreates       = "create or mint, 4 left in the create bucket"
	limUpdates       = "repoint by API or UPDATE, 5 left in the update bucket"
	limKeys          = "API key, 3 short of MaxKeys"
	limTSIG          = "TSIG key, 2 short of MaxTSIGKeys"
	limCredentials   = "DNS-01 credential, 2 short of MaxCredentials"
	limPublish       = "acme-dns update of one credential"
	limSetChallenges = "SetChallenges of one key"
	limRecords       = "record create"
	limRegister      = "registration from one /24"
)

var diffLimits = []diffLimit{
	{"capped", limCap, 3, apierror.CodeRateLimited},
	{"rate-create", limCreates, 4, apierror.CodeRateLimited},
	{"rate-update", limUpdates, 5, apierror.CodeRateLimited},
	{"limits", limKeys, 3, apierror.CodeConflict},
	{"limits", limTSIG, 2, apierror.CodeConflict},
	{"limits", limCredentials, 2, apierror.CodeBadRequest},
	{"limits", limPublish, acmeUpdates, apierror.CodeRateLimited},
	{"limits", limSetChallenges, acmeUpdates, apierror.CodeRateLimited},
	{"limits", limRecords, recordWrites, apierror.CodeRateLimited},
	{"acme-dns", limRegister, 20, apierror.CodeRateLimited},
}

func limited(op *diffOp) bool {
	return slices.ContainsFunc(diffLimits, func(l diffLimit) bool { return l.role == op.role && l.kind == op.kind })
}

// diffNode is one server on the shared database.
type diffNode struct {
	store *storage.Store
	rules hostnames.Rules
	accts *accounts.Service
	ring  *accounts.Keyring
	u     *dnsupdate.Updater
}

// diffAccount is an account of the scenario as its setup left it.
type diffAccount struct {
	id    string
	p     *access.Principal // as its API key authenticates
	tsig  string            // its TSIG key's name, which signs its UPDATE messages
	hosts []*storage.Hostname
	creds []*hostnames.NewCredential
	recs  []*storage.Record
}

type diffWorld struct {
	nodes   []*diffNode
	dom     *storage.Domain
	accts   map[string]*diffAccount // by role
	regs    []*hostnames.Registration
	drained time.Time // when the buckets of rate-create and rate-update were drained
	n       int       // the last address or value handed out
}

// diffOp is one write of the scenario.
type diffOp struct {
	role, kind string // what its outcome is counted under
	// want is the outcome each run must give; "" where a limit decides
	// which of the kind's writes pass (diffLimits).
	want string
	// after: a write of the suspended account that starts once the
	// suspension has returned.
	after bool
	node  int
	run   func(ctx context.Context, n *diffNode) string
	// written reports whether the write is stored: a refused one must not
	// be (the suspended account's writes).
	written func(ctx context.Context, q storage.Queries) bool
}

// diffRun is what one run answered and left.
type diffRun struct {
	mode  string
	ops   []*diffOp
	out   []string
	state map[string]diffState
	stats storage.PipelineStats
}

func runDiff(t *testing.T, d storage.Dialect, batched bool) *diffRun {
	t.Helper()
	ctx := context.Background()
	w := newDiffWorld(t, d)
	ops := w.scenario(t)
	r := &diffRun{mode: "alone", ops: ops, out: make([]string, len(ops))}
	if batched {
		r.mode = "batched"
	}
	suspend := func() {
		if _, err := w.nodes[0].accts.Patch(ctx, w.accts["suspended"].id, accounts.Input{Status: ptr(storage.AccountSuspended)}); err != nil {
			t.Errorf("suspending: %v", err)
		}
	}
	var (
		mu   sync.Mutex
		last = map[string]time.Time{} // when a role's last write returned
	)
	do := func(ctx context.Context, i int) {
		r.out[i] = ops[i].run(ctx, w.nodes[ops[i].node])
		mu.Lock()
		last[ops[i].role] = time.Now()
		mu.Unlock()
	}
	// The drained buckets' writes first, in both runs: each refill would
	// admit one more. In the batched run the other limits' writes come
	// next, each limit's together, so that the writes one limit decides
	// run at once, on both nodes; then the rest.
	var first, limits, rest, after []int
	for i, op := range ops {
		switch {
		case op.role == "rate-update" || op.role == "rate-create":
			first = append(first, i)
		case op.after:
			after = append(after, i)
		case limited(op):
			limits = append(limits, i)
		default:
			rest = append(rest, i)
		}
	}
	start := time.Now()
	if !batched {
		actx := storage.Alone(ctx)
		for _, i := range slices.Concat(first, limits, rest) {
			do(actx, i)
		}
		suspend()
		for _, i := range after {
			do(actx, i)
		}
	} else {
		seed := mrand.Uint64()
		t.Logf("batched run: order seed %d", seed)
		rng := mrand.New(mrand.NewPCG(seed, 0))
		for _, s := range [][]int{first, limits, rest, after} {
			rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		}
		slices.SortStableFunc(limits, func(i, j int) int {
			return strings.Compare(ops[i].role+ops[i].kind, ops[j].role+ops[j].kind)
		})
		before := slices.Concat(first, limits, rest)
		// Suspended once half its writes before the suspension are sent:
		// some of those run while it is suspended.
		half := 0
		for _, i := range before {
			if ops[i].role == "suspended" {
				half++
			}
		}
		half = max(half/2, 1)
		work := make(chan int)
		patched := make(chan struct{})
		var feeders, workers sync.WaitGroup
		feeders.Go(func() {
			sent := 0
			for _, i := range before {
				if ops[i].role == "suspended" {
					if sent++; sent == half {
						go func() {
							suspend()
							close(patched)
						}()
					}
				}
				work <- i
			}
		})
		feeders.Go(func() {
			<-patched
			for _, i := range after {
				work <- i
			}
		})
		for range diffWorkers {
			workers.Go(func() {
				for i := range work {
					do(ctx, i)
				}
			})
		}
		feeders.Wait()
		close(work)
		workers.Wait()
	}
	t.Logf("%s run: %d writes in %v", r.mode, len(ops), time.Since(start))
	for role, interval := range map[string]time.Duration{"rate-create": createInterval, "rate-update": updateInterval} {
		if since := last[role].Sub(w.drained); since >= interval {
			t.Fatalf("%s run: the writes of %s ended %v after its bucket was drained, past its refill interval %v: too slow to judge its count",
				r.mode, role, since, interval)
		}
	}
	for _, n := range w.nodes {
		s := n.store.PipelineStats()
		r.stats.Batches += s.Batches
		r.stats.Parts += s.Parts
		r.stats.Alone += s.Alone
	}
	r.state = w.state(t)
	checkRun(t, w, r)
	return r
}

// checkRun checks a run against the rules: each write's own answer, each
// limit's exact count, the suspension, and the pipeline's counts.
func checkRun(t *testing.T, w *diffWorld, r *diffRun) {
	t.Helper()
	ctx := context.Background()
	q := w.nodes[0].store.Reader()
	closed := []string{apierror.CodeForbidden, dns.RcodeToString[dns.RcodeNotAuth]}
	raced, refused, held := 0, 0, len(w.accts["suspended"].hosts)
	for i, op := range r.ops {
		got := r.out[i]
		if op.role == "suspended" && got == "ok" && (op.kind == "create" || op.kind == "UPDATE mint") {
			held++
		}
		switch {
		case op.role == "suspended" && !op.after && r.mode == "batched":
			// Started before the suspension returned: it may pass or not.
			raced++
			if got != op.want {
				refused++
			}
			if got != op.want && !slices.Contains(closed, got) {
				t.Errorf("%s: %s %s (before the suspension): %s, want %s or a closed account's refusal", r.mode, op.role, op.kind, got, op.want)
			}
		case op.want != "" && got != op.want:
			t.Errorf("%s: %s %s: %s, want %s", r.mode, op.role, op.kind, got, op.want)
		}
		if op.written != nil {
			if stored := op.written(ctx, q); stored != (got == "ok") {
				t.Errorf("%s: %s %s answered %s, and stored: %v", r.mode, op.role, op.kind, got, stored)
			}
		}
	}
	if s := r.state["suspended"]; s.Live != held {
		t.Errorf("%s: the suspended account holds %d live hostnames, and was answered ok for %d", r.mode, s.Live, held)
	}
	counts := tally(r)
	for _, l := range diffLimits {
		c := counts[l.role+": "+l.kind]
		n := 0
		for _, v := range c {
			n += v
		}
		if c["ok"] != l.ok || c[l.refused] != n-l.ok {
			t.Errorf("%s: %s %s: %v of %d, want %d ok and the rest %s", r.mode, l.role, l.kind, c, n, l.ok, l.refused)
		}
	}
	for role, s := range r.state {
		if s.Counter != s.Live {
			t.Errorf("%s: %s counts %d active hostnames, and holds %d", r.mode, role, s.Counter, s.Live)
		}
	}
	s := r.stats
	if r.mode == "alone" && (s.Batches != 0 || s.Parts != 0) {
		t.Errorf("alone: the pipeline batched writes (%+v)", s)
	}
	if r.mode == "batched" && (s.Batches == 0 || s.Parts < int64(len(r.ops))/4) {
		t.Errorf("batched: %+v for %d writes: too few shared a batch to test the pipeline", s, len(r.ops))
	}
	t.Logf("%s: %+v; %d of the suspended account's %d writes before its suspension refused", r.mode, s, refused, raced)
}

// tally counts outcomes by role and kind. The suspended account's writes
// that started before its suspension are left out: when they ran decides
// them.
func tally(r *diffRun) map[string]map[string]int {
	out := map[string]map[string]int{}
	for i, op := range r.ops {
		if op.role == "suspended" && !op.after {
			continue
		}
		k := op.role + ": " + op.kind
		if out[k] == nil {
			out[k] = map[string]int{}
		}
		out[k][r.out[i]]++
	}
	return out
}

func compareDiff(t *testing.T, ref, got *diffRun) {
	t.Helper()
	a, b := tally(ref), tally(got)
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if a[k] == nil {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) { // fmt prints maps sorted
			t.Errorf("%s: alone %v, batched %v", k, a[k], b[k])
		}
	}
	for role, s := range ref.state {
		if role == "suspended" {
			continue // timing's (checkRun)
		}
		if got.state[role] != s {
			t.Errorf("%s: alone left %+v, batched %+v", role, s, got.state[role])
		}
	}
}

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

// scenario is the world's writes, each made once.
func (w *diffWorld) scenario(t *testing.T) []*diffOp {
	t.Helper()
	const ok = "ok"
	var ops []*diffOp
	add := func(role, kind, want string, run func(ctx context.Context, n *diffNode) string) *diffOp {
		ops = append(ops, &diffOp{role: role, kind: kind, want: want, run: run})
		return ops[len(ops)-1]
	}
	api := func(role, kind, want string, call func(ctx context.Context, n *diffNode, a *diffAccount) error) *diffOp {
		a := w.accts[role]
		return add(role, kind, want, func(ctx context.Context, n *diffNode) string { return outcome(call(ctx, n, a)) })
	}
	update := func(role, kind, want string, prereqs, updates []string) *diffOp {
		m, key := wire(t, msg(t, diffZone, prereqs, updates)), w.accts[role].tsig
		return add(role, kind, want, func(ctx context.Context, n *diffNode) string {
			return dnsOutcome(n.u.Update(ctx, signedBy(key), "127.0.0.1:53", m))
		})
	}
	fqdn := func(label string) string { return label + "." + diffZone + "." }
	mint := func(role, kind, want, label, ip string) *diffOp {
		return update(role, kind, want, nil, []string{fmt.Sprintf("%s 60 IN A %s", fqdn(label), ip)})
	}
	repoint := func(role, kind, want string, h *storage.Hostname, ip string) *diffOp {
		return update(role, kind, want, nil, []string{fqdn(h.Label) + " 0 ANY A", fmt.Sprintf("%s 60 IN A %s", fqdn(h.Label), ip)})
	}
	create := func(role, kind, want string, label, ip *string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Create(ctx, a.p, hostnames.CreateInput{IP: ip, Label: label})
			return err
		})
	}
	repointAPI := func(role, kind, want, id string, ip *string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Update(ctx, a.p, id, hostnames.UpdateInput{IP: ip})
			return err
		})
	}
	publish := func(role, kind, want, user, key, subdomain, value string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, _ *diffAccount) error {
			return n.rules.Certificates.PublishChallenge(ctx, hostnames.ChallengeUpdate{User: user, Key: key, Subdomain: subdomain, TXT: value,
				From: netip.MustParseAddr("203.0.113.9")})
		})
	}
	createRecord := func(role, kind, want string, h *storage.Hostname, text string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Records.CreateRecord(ctx, a.p, h.ID, txt(text))
			return err
		})
	}
	setChallenge := func(role, kind, want string, h *storage.Hostname, value string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			return n.rules.Certificates.SetChallenges(ctx, a.p, h.ID, []string{value}, nil)
		})
	}
	createKey := func(role, kind, want string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.accts.CreateKey(ctx, a.id, accounts.KeyInput{Name: "scenario"})
			return err
		})
	}
	createTSIG := func(role, kind, want string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.accts.CreateTSIGKey(ctx, a.id, nil, accounts.TSIGInput{})
			return err
		})
	}
	credential := func(role, kind, want string, h *storage.Hostname) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Certificates.CreateCredential(ctx, a.p, h.ID)
			return err
		})
	}
	register := func(kind, want string, from netip.Addr) {
		add("acme-dns", kind, want, func(ctx context.Context, n *diffNode) string {
			_, err := n.rules.Certificates.Register(ctx, from, nil)
			return outcome(err)
		})
	}

	// The limits.
	for i, h := range w.accts["rate-update"].hosts {
		if i < 6 {
			repointAPI("rate-update", limUpdates, "", h.ID, w.addr())
		} else {
			repoint("rate-update", limUpdates, "", h, *w.addr())
		}
	}
	for i := range 8 {
		if i < 6 {
			create("rate-create", limCreates, "", nil, w.addr())
		} else {
			mint("rate-create", limCreates, "", fmt.Sprintf("rate-create-m%d", i), *w.addr())
		}
	}
	for i := range 18 {
		if i < 12 {
			create("capped", limCap, "", nil, w.addr())
		} else {
			mint("capped", limCap, "", fmt.Sprintf("capped-m%d", i), *w.addr())
		}
	}
	lim := w.accts["limits"]
	for range 8 {
		createKey("limits", limKeys, "")
	}
	for range 6 {
		createTSIG("limits", limTSIG, "")
	}
	for range 6 {
		credential("limits", limCredentials, "", lim.hosts[0])
	}
	c := lim.creds[len(lim.creds)-1]
	for range acmeUpdates + 4 {
		publish("limits", limPublish, "", c.Username, c.Password, c.Username, w.challenge())
	}
	for range acmeUpdates + 3 {
		setChallenge("limits", limSetChallenges, "", lim.hosts[2], w.challenge())
	}
	for i := range 20 {
		// Ten at most on a hostname: MaxRecords refuses none.
		createRecord("limits", limRecords, "", lim.hosts[3+i%2], fmt.Sprintf("limits-%d", i))
	}
	for i := range 26 {
		register(limRegister, "", netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)}))
	}

	// acme-dns registrations, whose writes are no account's.
	for i := range 4 {
		register("registration", ok, netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}))
	}
	r0 := w.regs[0]
	for range 3 {
		publish("acme-dns", "acme-dns update of a registration", ok, r0.Username, r0.Password, r0.Subdomain, w.challenge())
	}
	for id, want := range map[string]string{w.regs[1].Username: ok, "no-such-registration": apierror.CodeNotFound} {
		add("acme-dns", "registration delete", want, func(ctx context.Context, n *diffNode) string {
			return outcome(n.rules.Certificates.DeleteRegistration(ctx, id))
		})
	}

	// Accounts each of whose writes has its own answer, in any order.
	for i := range 4 {
		role := fmt.Sprintf("busy%d", i)
		a, other := w.accts[role], w.accts[fmt.Sprintf("busy%d", (i+1)%4)]
		hs := a.hosts
		for range 3 {
			create(role, "create", ok, nil, w.addr())
		}
		create(role, "create", apierror.CodeForbidden, nil, ptr(fmt.Sprintf("10.0.%d.1", i)))
		create(role, "create", apierror.CodeConflict, ptr(hs[2].Label), w.addr())
		repointAPI(role, "update", ok, hs[2].ID, w.addr())
		repointAPI(role, "update", ok, hs[3].ID, w.addr())
		repointAPI(role, "update", apierror.CodeForbidden, hs[4].ID, ptr(fmt.Sprintf("10.1.%d.1", i)))
		repointAPI(role, "update", apierror.CodeNotFound, "h_nosuchname", w.addr())
		repointAPI(role, "update", apierror.CodeNotFound, other.hosts[5].ID, w.addr())
		api(role, "renew", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Renew(ctx, a.p, hs[5].ID)
			return err
		})
		for _, h := range []*storage.Hostname{hs[6], hs[7], hs[7]} { // a release again changes nothing
			api(role, "release", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
				return n.rules.Lifecycle.Release(ctx, a.p, h.ID)
			})
		}
		createRecord(role, "record create", ok, hs[1], role+"-new0")
		createRecord(role, "record create", ok, hs[1], role+"-new1")
		createRecord(role, "record create", apierror.CodeConflict, hs[1], role+"-r2") // identical to one held
		api(role, "record update", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Records.UpdateRecord(ctx, a.p, hs[1].ID, a.recs[0].ID, txt(role+"-changed"))
			return err
		})
		for id, want := range map[string]string{a.recs[1].ID: ok, "r_nosuchrec": apierror.CodeNotFound} {
			api(role, "record delete", want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
				return n.rules.Records.DeleteRecord(ctx, a.p, hs[1].ID, id)
			})
		}
		credential(role, "DNS-01 credential", ok, hs[0])
		setChallenge(role, "SetChallenges", ok, hs[0], w.challenge())
		c := a.creds[0]
		publish(role, "acme-dns update", ok, c.Username, c.Password, c.Username, w.challenge())
		publish(role, "acme-dns update", ok, c.Username, c.Password, c.Username, w.challenge())
		if i == 0 { // once: a refused password costs a bcrypt comparison
			publish(role, "acme-dns update", apierror.CodeUnauthorized, c.Username, "wrong", c.Username, w.challenge())
		}
		createKey(role, "API key", ok)
		createKey(role, "API key", ok)
		createTSIG(role, "TSIG key", ok)
		mint(role, "UPDATE mint", ok, role+"-m0", *w.addr())
		mint(role, "UPDATE mint", ok, role+"-m1", *w.addr())
		mint(role, "UPDATE mint", apierror.CodeForbidden, role+"-m2", fmt.Sprintf("10.2.%d.1", i))
		repoint(role, "UPDATE repoint", ok, hs[8], *w.addr())
		name := fqdn(hs[8].Label)
		update(role, "UPDATE repoint", dns.RcodeToString[dns.RcodeYXDomain], []string{name + " NONE ANY"},
			[]string{name + " 0 ANY A", fmt.Sprintf("%s 60 IN A %s", name, *w.addr())})
	}
	for i, op := range ops {
		op.node = i % len(w.nodes)
	}

	// The suspended account, on the node it is suspended on (the other
	// hears of it through the feed, which no test runs). Its writes that
	// start before the suspension may pass, those that start after it
	// returned must not, and none refused may be stored. The writes here
	// are those whose rules refuse a closed account themselves; the others
	// (Release, CreateCredential, SetChallenges, keys) rely on the door's
	// authentication of the caller.
	s := w.accts["suspended"]
	held := func(label string) func(ctx context.Context, q storage.Queries) bool {
		return func(ctx context.Context, q storage.Queries) bool {
			h, err := q.HostnameByLabel(ctx, w.dom.ID, label)
			return err == nil && h.AccountID == s.id
		}
	}
	points := func(id, ip string) func(ctx context.Context, q storage.Queries) bool {
		return func(ctx context.Context, q storage.Queries) bool {
			h, err := q.Hostname(ctx, id)
			return err == nil && h.IP == ip
		}
	}
	for _, after := range []bool{false, true} {
		phase, want, door := "b", ok, ok
		hs, creds := s.hosts[:8], s.creds[:2]
		if after {
			phase, want, door = "a", apierror.CodeForbidden, dns.RcodeToString[dns.RcodeNotAuth]
			hs, creds = s.hosts[8:], s.creds[2:]
		}
		var mine []*diffOp
		for i := range 6 {
			label := fmt.Sprintf("suspended-%s-c%d", phase, i)
			op := create("suspended", "create", want, ptr(label), w.addr())
			op.written = held(label)
			mine = append(mine, op)
		}
		for i := range 3 {
			label := fmt.Sprintf("suspended-%s-m%d", phase, i)
			op := mint("suspended", "UPDATE mint", door, label, *w.addr())
			op.written = held(label)
			mine = append(mine, op)
		}
		for _, h := range hs[:4] {
			ip := w.addr()
			op := repointAPI("suspended", "update", want, h.ID, ip)
			op.written = points(h.ID, *ip)
			mine = append(mine, op)
		}
		for _, h := range hs[4:6] {
			ip := *w.addr()
			op := repoint("suspended", "UPDATE repoint", door, h, ip)
			op.written = points(h.ID, ip)
			mine = append(mine, op)
		}
		for i, c := range creds {
			v, h := w.challenge(), hs[6+i]
			op := publish("suspended", "acme-dns update", want, c.Username, c.Password, c.Username, v)
			op.written = func(ctx context.Context, q storage.Queries) bool {
				cs, err := q.Challenges(ctx, h.ID)
				return err == nil && slices.ContainsFunc(cs, func(c storage.Challenge) bool { return c.Value == v })
			}
			mine = append(mine, op)
			text := fmt.Sprintf("suspended-%s-r%d", phase, i)
			op = createRecord("suspended", "record create", want, h, text)
			op.written = func(ctx context.Context, q storage.Queries) bool {
				rs, err := q.Records(ctx, h.ID)
				return err == nil && slices.ContainsFunc(rs, func(r storage.Record) bool { return strings.Contains(r.Data, text) })
			}
			mine = append(mine, op)
		}
		for _, op := range mine {
			op.after = after
		}
	}
	return ops
}
