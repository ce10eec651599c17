package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// signedIn reports whether b still opens its team page.
func (b *browser) signedIn(t *testing.T) bool {
	t.Helper()
	p := b.get("/dashboard/team")
	if p.status == http.StatusSeeOther && p.header.Get("Location") == "/dashboard/signin" {
		return false
	}
	if p.status != 200 {
		t.Fatalf("team page: %d", p.status)
	}
	return true
}

// sessionIDs are the team's session ids as the admin API lists them.
func (s *site) sessionIDs(account string) (sessions, links []string) {
	s.t.Helper()
	st, out := s.api("GET", "/api/admin/accounts/"+account+"/sessions", adminToken, nil)
	if st != 200 {
		s.t.Fatalf("sessions: %d %v", st, out)
	}
	for _, x := range out["sessions"].([]any) {
		sessions = append(sessions, x.(map[string]any)["id"].(string))
	}
	for _, x := range out["signin_links"].([]any) {
		links = append(links, x.(map[string]any)["id"].(string))
	}
	return sessions, links
}

// The account page lists the team's signed-in browsers and unused links,
// ends one or all of them, and suspends and restores the team and sets its
// plan's end, through the API's rules, refusing bad input next to its
// field and changing nothing.
func TestOperatorTeamAccess(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := newSite(t, d, 2, "")
			team := s.team("Acme", "acme.example.net")
			path := "/dashboard/operator/accounts/" + team
			alice, bob := s.browser(), s.browser()
			alice.signInTeam(t, team)
			bob.signInTeam(t, team)
			s.link(team)
			sessions, links := s.sessionIDs(team)
			if len(sessions) != 2 || len(links) != 1 {
				t.Fatalf("%d sessions and %d links, want 2 and 1", len(sessions), len(links))
			}

			op := s.browser()
			csrf := op.signInOperator(t)
			p := op.get(path)
			p.has(t, `id="sessions"`, `id="signin-links"`, `action="`+path+`/sessions/`+sessions[0]+`/end"`,
				`action="`+path+`/signin-links/`+links[0]+`/end"`, `id="access">open<`, `id="plan-ends">never<`)

			// One browser (which one: both may have signed in in one millisecond).
			p = op.post(path+"/sessions/"+sessions[0]+"/end", url.Values{"csrf": {csrf}})
			p.has(t, "That browser is signed out.")
			rest := bob
			if a, b := alice.signedIn(t), bob.signedIn(t); a == b {
				t.Errorf("ending one session: alice signed in %v, bob %v; want one of them", a, b)
			} else if a {
				rest = alice
			}
			// Gone already: the rule's 404 on the page.
			if p := op.post(path+"/sessions/"+sessions[0]+"/end", url.Values{"csrf": {csrf}}); p.status != 404 {
				t.Errorf("ending an ended session: %d", p.status)
			}
			op.post(path+"/signin-links/"+links[0]+"/end", url.Values{"csrf": {csrf}}).has(t, "That sign-in link is withdrawn")
			s.link(team)
			op.post(path+"/sessions/end", url.Values{"csrf": {csrf}}).has(t, "1 browser signed out, 1 sign-in link withdrawn.", `id="no-sessions"`, `id="no-signin-links"`)
			if rest.signedIn(t) {
				t.Error("a member is still signed in after ending every session")
			}

			// Bad input, next to its field; nothing changes.
			errorNext(t, op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"active"}, "plan_ends_at": {"soon"}}),
				http.StatusBadRequest, "access-plan-ends-error", "plan end must be a date and time (UTC), such as 2027-01-31T00:00, or empty for never")
			msg := s.apiError("PATCH", "/api/admin/accounts/"+team, adminToken, map[string]any{"status": "closed"})
			errorNext(t, op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"closed"}}), http.StatusBadRequest, "access-status-error", msg)
			if a := s.adminAccount(team); a["status"] != "active" || a["plan_ends_at"] != nil {
				t.Fatalf("refused forms changed the account: %v", a)
			}

			// Suspend: the member is signed out; restore; then a plan end.
			carol := s.browser()
			carol.signInTeam(t, team)
			op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"suspended"}}).redirectsTo(t, path)
			op.get(path).has(t, `<span class="status status-suspended">suspended</span> since`)
			if a := s.adminAccount(team); a["status"] != "suspended" {
				t.Errorf("after suspending: %v", a)
			}
			if carol.signedIn(t) {
				t.Error("a member is still signed in after the team was suspended")
			}
			op.get("/dashboard/operator").has(t, "closed: no sign-in")
			op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"active"}, "plan_ends_at": {"2099-05-01T10:30"}}).redirectsTo(t, path)
			op.get(path).has(t, `id="access">open<`, `id="plan-ends">2099-05-01 10:30 UTC<`, `value="2099-05-01T10:30"`)
			if a := s.adminAccount(team); a["status"] != "active" || a["plan_ends_at"] != "2099-05-01T10:30:00.000Z" {
				t.Errorf("after setting the plan's end: %v", a)
			}
			op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"active"}, "plan_ends_at": {"2001-01-01T00:00"}}).redirectsTo(t, path)
			op.get(path).has(t, `status-expired">ended</span>`)
			op.post(path+"/access", url.Values{"csrf": {csrf}, "status": {"active"}, "plan_ends_at": {""}}).redirectsTo(t, path)
			if a := s.adminAccount(team); a["status"] != "active" || a["plan_ends_at"] != nil {
				t.Errorf("after clearing the plan's end: %v", a)
			}
			if !strings.Contains(op.get("/dashboard/operator").body, "Sign-in link</button>") {
				t.Error("an open team has no sign-in link button")
			}
		})
	}
}

// In profile 1 the same controls speak of accounts.
func TestOperatorAccountAccessProfile1(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": "Acme", "plan": "pro"})
	if st != 201 {
		t.Fatalf("account: %d %v", st, a)
	}
	op := s.browser()
	op.signInOperator(t)
	op.get("/dashboard/operator/accounts/"+a["id"].(string)).has(t, ">Account access</h2>", "Save account access", "Who can open this account's dashboard")
}
