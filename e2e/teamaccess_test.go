package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// member is a team member's browser, signed in through a link the
// operator issued.
type member struct {
	*dashClient
	session string // the session's id, as the operator's list shows it
}

// link issues a sign-in link for account through the admin API.
func (s *server) link(t testing.TB, account string) (token, id string) {
	t.Helper()
	r := s.withT(t).must(201, "POST", "/api/admin/accounts/"+account+"/signin-links", s.admin, nil)
	u, err := url.Parse(r.str("url"))
	if err != nil || r.str("id") == "" {
		t.Fatalf("sign-in link answer %s", r.raw)
	}
	return u.Query().Get("token"), r.str("id")
}

// signInMember opens a new sign-in link for account in a new browser.
func (s *server) signInMember(t testing.TB, account string) *member {
	t.Helper()
	before := s.teamAccess(t, account)
	token, _ := s.link(t, account)
	m := &member{dashClient: s.dashboard()}
	m.signIn(t, "/dashboard/signin/link", token)
	for _, id := range s.teamAccess(t, account)["sessions"] {
		if !strings.Contains(strings.Join(before["sessions"], " "), id) {
			m.session = id
		}
	}
	if m.session == "" {
		t.Fatal("the new session is not in the operator's list")
	}
	return m
}

// signedIn reports whether the member's browser still opens the team page.
func (m *member) signedIn(t testing.TB) bool {
	t.Helper()
	status, loc, _ := m.send(t, "/dashboard/team", nil)
	if status == 303 && strings.HasSuffix(loc, "/dashboard/signin") {
		return false
	}
	if status != 200 {
		t.Fatalf("the team page answered %d (to %q)", status, loc)
	}
	return true
}

// redeems reports whether a sign-in link's token still signs a browser in.
func (s *server) redeems(t testing.TB, token string) bool {
	t.Helper()
	b := s.dashboard()
	_, _, csrf := b.send(t, "/dashboard/signin/link?token="+url.QueryEscape(token), nil)
	status, _, _ := b.send(t, "/dashboard/signin/link", url.Values{"csrf": {csrf}, "token": {token}})
	return status == 303
}

// teamAccess is the operator's list: session ids and unused link ids.
func (s *server) teamAccess(t testing.TB, account string) map[string][]string {
	t.Helper()
	r := s.withT(t).must(200, "GET", "/api/admin/accounts/"+account+"/sessions", s.admin, nil)
	out := map[string][]string{"sessions": {}, "signin_links": {}}
	for k := range out {
		list, ok := r.body[k].([]any)
		if !ok {
			t.Fatalf("%s is not a list: %s", k, r.raw)
		}
		for _, x := range list {
			out[k] = append(out[k], x.(map[string]any)["id"].(string))
		}
	}
	return out
}

// The operator sees who can open a team's dashboard, and ends sessions
// and unused links one by one or all at once (admin API).
func TestOperatorEndsTeamSessions(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, options{dialect: d, profile: 2})
			team, _ := s.team(t, "access.example.net")
			other, _ := s.team(t, "")
			alice := s.signInMember(t, team)
			bob := s.signInMember(t, team)
			unused, unusedID := s.link(t, team)
			intruder := s.signInMember(t, other)

			got := s.teamAccess(t, team)
			if len(got["sessions"]) != 2 || fmt.Sprint(got["signin_links"]) != fmt.Sprint([]string{unusedID}) {
				t.Fatalf("list = %v; want 2 sessions and the unused link %s (not the used ones)", got, unusedID)
			}

			// One session, not the other; a session or link is ended only
			// through its own team.
			base := "/api/admin/accounts/" + team
			s.must(404, "DELETE", "/api/admin/accounts/"+other+"/sessions/"+alice.session, s.admin, nil)
			s.must(404, "DELETE", "/api/admin/accounts/"+other+"/signin-links/"+unusedID, s.admin, nil)
			s.must(404, "DELETE", base+"/sessions/"+intruder.session, s.admin, nil)
			s.must(404, "DELETE", "/api/admin/accounts/acc_none/sessions", s.admin, nil)
			if r := s.must(200, "DELETE", base+"/sessions/"+alice.session, s.admin, nil); r.body["ended"] != true {
				t.Errorf("ending a session answered %s", r.raw)
			}
			if alice.signedIn(t) || !bob.signedIn(t) || !intruder.signedIn(t) {
				t.Errorf("after ending alice's session: alice %v, bob %v, the other team %v; want false, true, true",
					alice.signedIn(t), bob.signedIn(t), intruder.signedIn(t))
			}
			s.must(404, "DELETE", base+"/sessions/"+alice.session, s.admin, nil)

			// A withdrawn link no longer signs in.
			s.must(200, "DELETE", base+"/signin-links/"+unusedID, s.admin, nil)
			if s.redeems(t, unused) {
				t.Error("a withdrawn sign-in link still signs in")
			}
			s.must(404, "DELETE", base+"/signin-links/"+unusedID, s.admin, nil)

			// All at once.
			s.link(t, team)
			r := s.must(200, "DELETE", base+"/sessions", s.admin, nil)
			if fmt.Sprint(r.body["sessions_ended"], r.body["signin_links_ended"]) != "1 1" {
				t.Errorf("ending all: %s, want 1 session and 1 link", r.raw)
			}
			if bob.signedIn(t) || !intruder.signedIn(t) {
				t.Error("ending a team's sessions missed bob's or reached another team's")
			}
			if got := s.teamAccess(t, team); len(got["sessions"])+len(got["signin_links"]) != 0 {
				t.Errorf("after ending all, the list holds %v", got)
			}
		})
	}
}

// Suspending a team, or its plan ending, closes its access at once: its
// sessions end and its links stop, its keys and DNS-01 credentials answer
// 403 (dyndns2: abuse), no link can be issued; its hostnames stay served.
// Opening it again lets its keys back in.
func TestClosedTeamAccess(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := start(t, options{dialect: d, profile: 2})
			team, key := s.team(t, "closed.example.net")
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "www"})
			s.live(t, key, h.str("id"))
			cred := s.acmeCredential(t, key, h.str("id"))
			path := "/api/admin/accounts/" + team

			const planLeft = 1500 * time.Millisecond
			for _, c := range []struct {
				name, state string
				close, open func() map[string]any
				wait        time.Duration
			}{
				{"suspended", "suspended", func() map[string]any { return map[string]any{"status": "suspended"} },
					func() map[string]any { return map[string]any{"status": "active"} }, 0},
				{"plan ended", "ended", func() map[string]any {
					return map[string]any{"plan_ends_at": time.Now().Add(planLeft).UTC().Format(time.RFC3339Nano)}
				}, func() map[string]any { return map[string]any{"plan_ends_at": nil} }, planLeft},
			} {
				t.Run(c.name, func(t *testing.T) {
					m := s.signInMember(t, team)
					token, _ := s.link(t, team)
					s.must(200, "GET", "/api/v1/hostnames", key, nil) // the key is cached now
					t0 := time.Now()
					a := s.must(200, "PATCH", path, s.admin, c.close())
					if c.wait > 0 {
						// Until the plan ends, nothing changes.
						if a.str("status") != "active" || a.str("plan_ends_at") == "" {
							t.Errorf("a plan that ends later: %s", a.raw)
						}
						s.must(200, "GET", "/api/v1/hostnames", key, nil)
						if !m.signedIn(t) {
							t.Error("a member was signed out before the plan's end")
						}
						if time.Since(t0) > c.wait {
							t.Fatalf("too slow to check before the plan's end (%v); the checks above prove nothing", time.Since(t0))
						}
						time.Sleep(c.wait - time.Since(t0))
					}
					if a = s.must(200, "GET", path, s.admin, nil); a.str("status") != c.state {
						t.Errorf("account status %q, want %q", a.str("status"), c.state)
					}
					if m.signedIn(t) {
						t.Error("a member is still signed in")
					}
					if s.redeems(t, token) {
						t.Error("an unused link still signs in")
					}
					if r := s.do("POST", path+"/signin-links", s.admin, nil); r.status != 409 || r.str("code") != "CONFLICT" {
						t.Errorf("a new link: %d %s, want 409 CONFLICT", r.status, r.raw)
					}
					if got := s.teamAccess(t, team); len(got["sessions"])+len(got["signin_links"]) != 0 {
						t.Errorf("the operator's list holds %v", got)
					}
					r := s.do("GET", "/api/v1/hostnames", key, nil)
					if r.status != 403 || r.str("code") != "FORBIDDEN" || !strings.Contains(r.str("error"), c.state) {
						t.Errorf("the team's key: %d %s, want 403 FORBIDDEN saying %s", r.status, r.raw, c.state)
					}
					if r := s.acmeSend(t, "POST", "/api/acme/update", cred.headers(""), acmeBody("subdomain", cred.user, "txt", acmeValue())); r.status != 403 {
						t.Errorf("acme-dns update: %d %s, want 403", r.status, r.raw)
					}
					if got := s.dyn(t, "/nic/update", key, "hostname="+h.str("hostname")+"&myip=198.41.0.9", nil); got.body != "abuse" {
						t.Errorf("dyndns2: %q, want abuse", got.body)
					}
					s.resolves(h.str("hostname"), dns.TypeA, "198.41.0.4")

					if a := s.must(200, "PATCH", path, s.admin, c.open()); a.str("status") != "active" {
						t.Errorf("opened again: status %q", a.str("status"))
					}
					s.must(200, "GET", "/api/v1/hostnames", key, nil)
					if s.redeems(t, token) {
						t.Error("a link ended by the closing signs in once the team is open again")
					}
				})
			}

			// Bad input changes nothing.
			for _, body := range []map[string]any{
				{"status": "ended"}, {"status": "closed"}, {"status": 1},
				{"plan_ends_at": "tomorrow"}, {"plan_ends_at": "2026-01-01T00:00:00Z", "status": "gone"},
			} {
				if r := s.do("PATCH", path, s.admin, body); r.status != 400 || r.str("code") != "BAD_REQUEST" {
					t.Errorf("PATCH %v: %d %s, want 400 BAD_REQUEST", body, r.status, r.raw)
				}
			}
			if a := s.must(200, "GET", path, s.admin, nil); a.str("status") != "active" || a.body["plan_ends_at"] != nil {
				t.Errorf("after refused patches: %s", a.raw)
			}
		})
	}
}

// A suspension made through one node holds on the other at once: the key
// it had cached and the session it serves.
func TestClosedTeamAcrossNodes(t *testing.T) {
	a, _ := spawn(t, options{dialect: storage.Postgres, profile: 2})
	b, _ := spawn(t, options{dialect: storage.Postgres, profile: 2, dsn: a.dsn})
	team, key := a.team(t, "nodes.example.net")
	m := b.signInMember(t, team)
	b.must(200, "GET", "/api/v1/hostnames", key, nil) // cached on B
	a.must(200, "PATCH", "/api/admin/accounts/"+team, a.admin, map[string]any{"status": "suspended"})
	if m.signedIn(t) {
		t.Error("a session on node B outlived the suspension on node A")
	}
	eventually(t, time.Second, func() bool {
		return b.do("GET", "/api/v1/hostnames", key, nil).status == 403
	}, "a key cached on node B still works after its team was suspended on node A")
}

// Suspension is checked inside the write: a repoint that waits on a slow
// target while its team is suspended is refused, not written, and a closed
// team's targets are no longer followed.
func TestSuspendedDuringSlowTarget(t *testing.T) {
	t.Parallel()
	p := newPlatformDNS(t, 1)
	p.set("app.platform.test", "198.41.0.50")
	s := start(t, options{profile: 2, extra: []string{"resolver " + p.addr}})
	team, key := s.team(t, "slow.example.net")
	id, host := s.recHost(t, key, "web", "198.41.0.4")
	follower, followerHost := s.recHost(t, key, "app", "198.41.0.5")
	s.must(200, "PUT", "/api/v1/hostnames/"+follower, key, map[string]any{"target": "app.platform.test"})
	s.resolves(followerHost, dns.TypeA, "198.41.0.50")

	p.set("new.platform.test", "198.41.0.51")
	p.slow("new.platform.test", time.Second)
	done := make(chan response, 1)
	go func() {
		done <- s.do("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": "new.platform.test"})
	}()
	time.Sleep(300 * time.Millisecond) // the PUT waits on the target
	s.must(200, "PATCH", "/api/admin/accounts/"+team, s.admin, map[string]any{"status": "suspended"})
	if r := <-done; r.status != 403 || r.str("code") != "FORBIDDEN" {
		t.Errorf("a repoint that waited on its target while the team was suspended: %d %s, want 403", r.status, r.raw)
	}
	s.resolves(host, dns.TypeA, "198.41.0.4")

	p.set("app.platform.test", "198.41.0.60") // the target moves; the closed team's name does not follow
	holdsFor(t, 7*time.Second, func() bool { return s.answersNow(followerHost, []string{"198.41.0.50"}, nil) },
		"a suspended team's target is still followed")
}
