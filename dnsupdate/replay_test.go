package dnsupdate_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// sendSigned hands m to the door signed with sig as it is: the same sig
// twice is one message received twice (a replay, or a retransmission).
func (d *door) sendSigned(tb testing.TB, sig *dns.TSIG, m *dns.Msg) dnsupdate.Answer {
	tb.Helper()
	a, err := d.u.Update(context.Background(), sig, "127.0.0.1:53", wire(tb, m))
	if err != nil {
		tb.Fatalf("Update: %v", err)
	}
	return a
}

// isReplay reports whether a is the refusal of a message received before.
func isReplay(a dnsupdate.Answer) bool {
	return a.Rcode == dns.RcodeRefused && a.EDE != nil && a.EDE.InfoCode == dns.ExtendedErrorCodeProhibited &&
		strings.Contains(a.EDE.ExtraText, "already received")
}

// A signed message is applied once, whatever became of it the first time:
// applied, a no-op, refused by a prerequisite or by a rule. Sent again once
// the zone has changed so that it would now apply, it is still refused.
func TestReplayRefused(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			mint := signedBy(d.key + ".")
			if a := d.sendSigned(t, mint, msg(t, "example.org", nil, []string{"web.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("mint: %v", a.EDE)
			}
			repoint := func(to string) *dns.Msg {
				return msg(t, "example.org", nil, []string{"web.example.org. 0 ANY A", "web.example.org. 60 IN A " + to})
			}
			// An attacker keeps the repoint to .2, the owner moves on to .3.
			toTwo, toTwoSig := repoint("198.41.0.2"), signedBy(d.key+".")
			if a := d.sendSigned(t, toTwoSig, toTwo); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("repoint: %v", a.EDE)
			}
			if a := d.send(t, repoint("198.41.0.3")); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("repoint: %v", a.EDE)
			}
			// A prerequisite that fails now, and a rule that refuses now.
			guarded := msg(t, "example.org", []string{"web.example.org. 0 IN A 198.41.0.4"}, []string{"web.example.org. 0 ANY A", "web.example.org. 60 IN A 198.41.0.5"})
			guardedSig := signedBy(d.key + ".")
			if a := d.sendSigned(t, guardedSig, guarded); a.Rcode != dns.RcodeNXRrset {
				t.Fatalf("prerequisite on .4: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
			}
			private := repoint("10.0.0.1") // pro plan: private addresses are refused
			privateSig := signedBy(d.key + ".")
			if a := d.sendSigned(t, privateSig, private); a.Rcode != dns.RcodeRefused || isReplay(a) {
				t.Fatalf("a private address: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
			}
			noop := msg(t, "example.org", []string{"web.example.org ANY ANY"}, []string{"web.example.org. 60 IN A 198.41.0.3"})
			noopSig := signedBy(d.key + ".")
			if a := d.sendSigned(t, noopSig, noop); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("no-op: %v", a.EDE)
			}
			// Now the prerequisite on .4 would hold.
			if a := d.send(t, repoint("198.41.0.4")); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("repoint: %v", a.EDE)
			}
			for _, tc := range []struct {
				name string
				sig  *dns.TSIG
				m    *dns.Msg
			}{
				{"the mint", mint, msg(t, "example.org", nil, []string{"web.example.org. 60 IN A 198.41.0.1"})},
				{"the repoint to .2", toTwoSig, toTwo},
				{"the message whose prerequisite failed, now holding", guardedSig, guarded},
				{"the message a rule refused", privateSig, private},
				{"the no-op", noopSig, noop},
			} {
				before, err := d.store.Reader().LastChange(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if a := d.sendSigned(t, tc.sig, tc.m); !isReplay(a) {
					t.Errorf("%s sent again: %s %v, want REFUSED as a replay", tc.name, dns.RcodeToString[a.Rcode], a.EDE)
				}
				if got := d.addr(t, "web"); got != "198.41.0.4" {
					t.Errorf("%s sent again: web serves %s, want 198.41.0.4", tc.name, got)
				}
				if after, _ := d.store.Reader().LastChange(context.Background()); after != before {
					t.Errorf("%s sent again wrote changes %d..%d", tc.name, before, after)
				}
			}
		})
	}
}

// Of the same message sent 8 times at once, exactly one is applied (the
// store's key decides, as it does between nodes); the others are replays.
func TestReplayConcurrent(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			if a := d.send(t, msg(t, "example.org", nil, []string{"race.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("mint: %v", a.EDE)
			}
			for round, to := range []string{"198.41.0.2", "198.41.0.3", "198.41.0.4"} {
				m := wire(t, msg(t, "example.org", nil, []string{"race.example.org. 0 ANY A", "race.example.org. 60 IN A " + to}))
				sig := signedBy(d.key + ".")
				const callers = 8
				answers := make([]dnsupdate.Answer, callers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						<-start
						a, err := d.u.Update(context.Background(), sig, "127.0.0.1:53", m.Copy())
						if err != nil {
							t.Error(err)
						}
						answers[i] = a
					})
				}
				close(start)
				wg.Wait()
				applied := 0
				for _, a := range answers {
					switch {
					case a.Rcode == dns.RcodeSuccess:
						applied++
					case !isReplay(a):
						t.Errorf("round %d: %s %v, want NOERROR or a replay", round, dns.RcodeToString[a.Rcode], a.EDE)
					}
				}
				if applied != 1 {
					t.Errorf("round %d: %d of %d sends of one message applied, want exactly 1", round, applied, callers)
				}
				if got := d.addr(t, "race"); got != to {
					t.Errorf("round %d: race serves %s, want %s", round, got, to)
				}
			}
		})
	}
}

// The MAC is the message's with its key: another key's message with the
// same MAC bytes is no replay. A record without a MAC, or signed further
// from the server's clock than MaxFudge, is refused: its MAC could not be
// kept as long as the message would be taken.
func TestReplayKeysAndTimes(t *testing.T) {
	t.Parallel()
	d := newDoor(t, storage.SQLite)
	ctx := context.Background()
	other, err := d.accts.CreateTSIGKey(ctx, d.account, nil, accounts.TSIGInput{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ring.Load(ctx, d.store.Reader()); err != nil {
		t.Fatal(err)
	}
	sig := signedBy(d.key + ".")
	if a := d.sendSigned(t, sig, msg(t, "example.org", nil, []string{"one.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
		t.Fatalf("mint: %v", a.EDE)
	}
	same := *sig
	same.Hdr.Name = other.Key.KeyName + "."
	if a := d.sendSigned(t, &same, msg(t, "example.org", nil, []string{"two.example.org. 60 IN A 198.41.0.2"})); a.Rcode != dns.RcodeSuccess {
		t.Errorf("another key's message with the same MAC: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
	}
	upper := *sig
	upper.Hdr.Name, upper.MAC = strings.ToUpper(d.key)+".", strings.ToUpper(sig.MAC)
	if a := d.sendSigned(t, &upper, msg(t, "example.org", nil, []string{"three.example.org. 60 IN A 198.41.0.3"})); !isReplay(a) {
		t.Errorf("the key's name and MAC in capitals: %s %v, want a replay", dns.RcodeToString[a.Rcode], a.EDE)
	}
	now := time.Now().Unix()
	for _, tc := range []struct {
		name string
		edit func(*dns.TSIG)
		ok   bool
	}{
		{"no MAC", func(s *dns.TSIG) { s.MAC = "" }, false},
		{"signed 301 s ago", func(s *dns.TSIG) { s.TimeSigned = uint64(now - 301) }, false},
		{"signed 3000 s ahead with a fudge of 65535", func(s *dns.TSIG) { s.TimeSigned, s.Fudge = uint64(now+3000), 65535 }, false},
		{"signed 290 s ago", func(s *dns.TSIG) { s.TimeSigned = uint64(now - 290) }, true},
		{"signed 290 s ahead", func(s *dns.TSIG) { s.TimeSigned = uint64(now + 290) }, true},
	} {
		s := signedBy(d.key + ".")
		tc.edit(s)
		a := d.sendSigned(t, s, msg(t, "example.org", nil, []string{"one.example.org. 0 ANY A", "one.example.org. 60 IN A 198.41.0.9"}))
		if got := a.Rcode == dns.RcodeSuccess; got != tc.ok {
			t.Errorf("%s: %s %v, want applied %v", tc.name, dns.RcodeToString[a.Rcode], a.EDE, tc.ok)
		}
		if !tc.ok && (a.Rcode != dns.RcodeRefused || a.EDE == nil || a.EDE.InfoCode != dns.ExtendedErrorCodeProhibited) {
			t.Errorf("%s: %s %v, want REFUSED (Prohibited)", tc.name, dns.RcodeToString[a.Rcode], a.EDE)
		}
	}
}

// auditor is app's auditor (app/tsig.go) over an audit.Log: a refusal is
// recorded by its rcode's name, under the log's quota.
type auditor struct{ log *audit.Log }

func (a auditor) Begin(ctx context.Context, e *storage.AuditEntry) context.Context {
	return audit.Begin(ctx, e)
}

func (a auditor) Finish(e *storage.AuditEntry, out dnsupdate.Answer) {
	code := out.Code
	if code == "" && out.Rcode != dns.RcodeSuccess {
		code = dns.RcodeToString[out.Rcode]
	}
	if out.Rcode != dns.RcodeServerFailure {
		a.log.Finish(e, 0, code)
	}
}

// A message that changes nothing writes nothing but its MAC: no audit
// entry, no change row (so no new serial), as a no-op PUT. Refusals are
// recorded under the audit log's quota (60 a minute per actor and node).
func TestNoopWritesNothing(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			d.u.Audit = auditor{audit.New(d.store, slog.New(slog.DiscardHandler))}
			ctx := context.Background()
			count := func() int {
				es, err := d.store.Reader().AuditEntries(ctx, storage.AuditFilter{}, 1000)
				if err != nil {
					t.Fatal(err)
				}
				return len(es)
			}
			if a := d.send(t, msg(t, "example.org", nil, []string{"web.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("mint: %v", a.EDE)
			}
			if a := d.send(t, msg(t, "example.org", nil, []string{"_acme-challenge.web.example.org. 60 IN TXT \"" + strings.Repeat("v", 43) + "\""})); a.Rcode != dns.RcodeSuccess {
				t.Fatalf("challenge: %v", a.EDE)
			}
			if n := count(); n != 2 {
				t.Fatalf("%d audit entries after a mint and a challenge, want 2", n)
			}
			last, err := d.store.Reader().LastChange(ctx)
			if err != nil {
				t.Fatal(err)
			}
			noops := []struct{ prereqs, updates []string }{
				{prereqs: []string{"web.example.org ANY ANY"}},
				{prereqs: []string{"web.example.org. 0 IN A 198.41.0.1", "gone.example.org NONE ANY"}},
				{updates: []string{"web.example.org. 3600 IN A 198.41.0.1"}}, // another TTL: external-dns at every sync
				{updates: []string{"web.example.org. 0 NONE A 198.41.0.9", "gone.example.org. 0 ANY ANY", "_acme-challenge.gone.example.org. 0 ANY TXT"}},
				{updates: []string{"_acme-challenge.web.example.org. 60 IN TXT \"" + strings.Repeat("v", 43) + "\""}},
				{updates: []string{"web.example.org. 0 ANY A", "web.example.org. 60 IN A 198.41.0.1"}}, // delete and add back
			}
			for i := range 60 {
				n := noops[i%len(noops)]
				if a := d.send(t, msg(t, "example.org", n.prereqs, n.updates)); a.Rcode != dns.RcodeSuccess {
					t.Fatalf("no-op %v %v: %s %v", n.prereqs, n.updates, dns.RcodeToString[a.Rcode], a.EDE)
				}
			}
			if n := count(); n != 2 {
				t.Errorf("%d audit entries after 60 no-ops, want 2 (the mint's, the challenge's)", n)
			}
			if now, _ := d.store.Reader().LastChange(ctx); now != last {
				t.Errorf("60 no-ops wrote changes %d..%d", last, now)
			}
			for range 100 {
				if a := d.send(t, msg(t, "example.org", []string{"web.example.org NONE ANY"}, nil)); a.Rcode != dns.RcodeYXDomain {
					t.Fatalf("a failing prerequisite: %s %v", dns.RcodeToString[a.Rcode], a.EDE)
				}
			}
			// 60 a minute: 61 or more only if the minute turned meanwhile.
			if n := count() - 2; n < 60 || n > 120 {
				t.Errorf("%d audit entries for 100 refusals, want 60 (120 across a minute's turn)", n)
			}
		})
	}
}

// A message refused because its key's team was suspended is not applied
// when replayed after the team is restored, within the window.
func TestReplayAfterRestore(t *testing.T) {
	for _, dialect := range storagetest.Dialects {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d := newDoor(t, dialect)
			ctx := context.Background()
			setStatus := func(status string) {
				t.Helper()
				a, err := d.accts.Patch(ctx, d.account, accounts.Input{Status: &status})
				if err != nil {
					t.Fatal(err)
				}
				d.ring.SetAccess(a)
			}
			setStatus("suspended")
			sig, m := signedBy(d.key+"."), msg(t, "example.org", nil, []string{"late.example.org. 60 IN A 198.41.0.9"})
			if _, err := d.u.Update(ctx, sig, "127.0.0.1:53", wire(t, m)); err == nil {
				t.Fatal("a suspended team's message was taken")
			}
			setStatus("active")
			if a := d.sendSigned(t, sig, m); !isReplay(a) {
				t.Fatalf("replayed after the team's restore: %s %v, want the replay's refusal", dns.RcodeToString[a.Rcode], a.EDE)
			}
			if a := d.send(t, msg(t, "example.org", []string{"late.example.org. 0 NONE ANY"}, nil)); a.Rcode != dns.RcodeSuccess {
				t.Errorf("the replayed message minted late.example.org: %s", dns.RcodeToString[a.Rcode])
			}
		})
	}
}
