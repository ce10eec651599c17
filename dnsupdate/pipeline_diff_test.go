package dnsupdate_test

import (
	"context"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/plans"
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
