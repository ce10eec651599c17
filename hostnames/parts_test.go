package hostnames

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// team is a [P2] service on a fresh store with one team that owns one
// active domain, a hostname on it, and the team's key.
type team struct {
	hs    *Service
	rules Rules
	p     *access.Principal
	h     *storage.Hostname
}

func newTeam(t *testing.T, recordWrites int) *team {
	t.Helper()
	st := storagetest.Open(t, storage.SQLite)
	ctx := context.Background()
	_, err := st.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "a", Plan: "team", Billing: true, CreatedAt: 1}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "team.test", AccountID: "acc", Status: storage.DomainActive, CreatedAt: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := New(st, Config{Profile: 2}, slog.New(slog.DiscardHandler))
	rules := DefaultRules(hs)
	rules.Records = NewRecords(hs, recordWrites)
	p := &access.Principal{AccountID: "acc", Scopes: access.All()}
	ip, sub := "198.41.0.4", "www"
	h, err := hs.Create(ctx, p, CreateInput{IP: &ip, Subdomain: &sub})
	if err != nil {
		t.Fatal(err)
	}
	// As the watcher does once every nameserver serves it.
	h.Status = storage.StatusLive
	if _, err := st.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.UpdateHostname(ctx, h) }); err != nil {
		t.Fatal(err)
	}
	return &team{hs: hs, rules: rules, p: p, h: h}
}

func status(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	pe, ok := apierror.As(err)
	if !ok {
		t.Fatalf("not a problem: %v", err)
	}
	return httperr.Status(pe.Code)
}

func TestAbuse(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 0)
	ctx, ab := context.Background(), tm.rules.Abuse
	for _, step := range []struct {
		name   string
		act    func(context.Context, string) (*storage.Hostname, error)
		status int    // 0: done
		state  string // the hostname's state after it
	}{
		{"restore what is not suspended", ab.Restore, http.StatusConflict, storage.StatusLive},
		{"suspend", ab.Suspend, 0, storage.StatusSuspended},
		{"suspend again changes nothing", ab.Suspend, 0, storage.StatusSuspended},
		{"restore", ab.Restore, 0, storage.StatusPending},
		{"terminate", ab.Terminate, 0, storage.StatusTerminated},
		{"suspend what is terminated", ab.Suspend, http.StatusConflict, storage.StatusTerminated},
	} {
		_, err := step.act(ctx, tm.h.ID)
		if got := status(t, err); got != step.status {
			t.Errorf("%s: status %d (%v), want %d", step.name, got, err, step.status)
		}
		h, err := tm.hs.store.Reader().Hostname(ctx, tm.h.ID)
		if err != nil || h.Status != step.state {
			t.Errorf("%s: the hostname is %s (%v), want %s", step.name, h.Status, err, step.state)
		}
	}
	if _, err := ab.Suspend(ctx, "h_nosuchname"); status(t, err) != http.StatusNotFound {
		t.Errorf("suspending a hostname that does not exist: %v, want 404", err)
	}
}

func TestRecordsPart(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 2)
	ctx, rs := context.Background(), tm.rules.Records
	txt := func(s string) records.Input { return records.Input{Type: "TXT", Text: []byte(`"` + s + `"`)} }
	a, err := rs.CreateRecord(ctx, tm.p, tm.h.ID, txt("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.CreateRecord(ctx, tm.p, tm.h.ID, txt("two")); err != nil {
		t.Fatal(err)
	}
	// The third write in a minute is past the part's own limit of 2.
	if _, err := rs.CreateRecord(ctx, tm.p, tm.h.ID, txt("three")); status(t, err) != http.StatusTooManyRequests {
		t.Errorf("a third record write in a minute: %v, want 429", err)
	}
	_, got, err := rs.Records(ctx, tm.p, tm.h.ID)
	if err != nil || len(got) != 2 || !slices.ContainsFunc(got, func(r storage.Record) bool { return r.ID == a.ID }) {
		t.Errorf("Records = %d records (%v), want the two written", len(got), err)
	}
	other := &access.Principal{AccountID: "someone-else", Scopes: access.All()}
	if _, _, err := rs.Records(ctx, other, tm.h.ID); status(t, err) != http.StatusNotFound {
		t.Errorf("another team reads the records: %v, want 404", err)
	}
}

func TestCertificatesPartDNS01(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 0)
	ctx, cs := context.Background(), tm.rules.Certificates
	cred, err := cs.CreateCredential(ctx, tm.p, tm.h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Fulldomain != records.ChallengeLabel+".www.team.test" {
		t.Errorf("fulldomain = %q", cred.Fulldomain)
	}
	value := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ" // 43 characters
	up := ChallengeUpdate{User: cred.Username, Key: cred.Password, Subdomain: cred.Username, TXT: value}
	if err := cs.PublishChallenge(ctx, up); err != nil {
		t.Fatal(err)
	}
	got, err := tm.hs.store.Reader().Challenges(ctx, tm.h.ID)
	if err != nil || len(got) != 1 || got[0].Value != value {
		t.Errorf("challenges = %+v (%v), want the value published", got, err)
	}
	up.Key = "wrong"
	if err := cs.PublishChallenge(ctx, up); status(t, err) != http.StatusUnauthorized {
		t.Errorf("a wrong key: %v, want 401", err)
	}
	if _, err := tm.rules.Abuse.Suspend(ctx, tm.h.ID); err != nil {
		t.Fatal(err)
	}
	up.Key = cred.Password
	if err := cs.PublishChallenge(ctx, up); status(t, err) != http.StatusForbidden {
		t.Errorf("publishing for a suspended hostname: %v, want 403", err)
	}
}

func TestDiagnoserPart(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := tm.rules.Diagnoser.Diagnose(ctx, tm.p, tm.h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil || len(r.Checks) == 0 {
		t.Errorf("a report with no checks: %+v", r)
	}
	other := &access.Principal{AccountID: "someone-else", Scopes: access.All()}
	if _, err := tm.rules.Diagnoser.Diagnose(ctx, other, tm.h.ID); status(t, err) != http.StatusNotFound {
		t.Errorf("another team's diagnose: %v, want 404", err)
	}
}
