package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

const auditPath = "/dashboard/operator/audit"

var (
	auditBody = regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`)
	auditRow  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	auditCell = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	anyTag    = regexp.MustCompile(`<[^>]+>`)
	olderLink = regexp.MustCompile(`href="([^"]+)" rel="next"`)
	newKey    = regexp.MustCompile(`id="new-key" class="mono" type="text" readonly value="([^"]+)"`)
	auditTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
)

// auditEntry is one row of the audit page, as text.
type auditEntry struct{ when, actor, account, action, object, result, status, address, detail string }

// rows reads the audit page's table; the page's other text (the hint names
// actors too) is not in it.
func (p page) rows(t *testing.T) []auditEntry {
	t.Helper()
	m := auditBody.FindStringSubmatch(p.body)
	if m == nil {
		return nil
	}
	var out []auditEntry
	for _, r := range auditRow.FindAllStringSubmatch(m[1], -1) {
		var c []string
		for _, cell := range auditCell.FindAllStringSubmatch(r[1], -1) {
			c = append(c, strings.TrimSpace(html.UnescapeString(anyTag.ReplaceAllString(cell[1], ""))))
		}
		if len(c) != 9 {
			t.Fatalf("a row with %d cells: %s", len(c), r[0])
		}
		out = append(out, auditEntry{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]})
	}
	return out
}

// older is the page's "Older entries" link, "" when there is none.
func (p page) older() string {
	if m := olderLink.FindStringSubmatch(p.body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// Writes through the API and the dashboard, and a refused one, are listed
// newest first; each filter narrows the list; no secret is ever shown.
func TestOperatorAudit(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	team := s.team("Acme", "acme.example.net")   // admin: the account, its domain
	apiSecret, apiKeyID := s.teamKey(team, "ci") // admin: a key, shown once
	linkToken := s.link(team)                    // admin: a sign-in link, shown once
	if p := op.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"<b>Beta</b>"}, "plan": {"team"}}); p.status != http.StatusSeeOther {
		t.Fatalf("create account: %d %s", p.status, p.body)
	}
	if p := op.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {""}, "plan": {"team"}}); p.status != http.StatusBadRequest {
		t.Fatalf("refused account: %d %s", p.status, p.body)
	}
	member := s.browser()
	mcsrf := member.signInTeam(t, team)
	p := member.post("/dashboard/team/keys", url.Values{"csrf": {mcsrf}, "name": {"laptop"}, "scope": {"hostnames:read"}, "reach": {"team"}})
	m := newKey.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil {
		t.Fatalf("create key in the dashboard: %d %s", p.status, p.body)
	}
	dashSecret := m[1]

	if p := op.get("/dashboard/operator"); !strings.Contains(p.body, `href="`+auditPath+`"`) {
		t.Errorf("the operator page does not link the audit log: %s", p.body)
	}
	all := op.get(auditPath).rows(t)
	if len(all) == 0 || all[0].action != "POST /dashboard/team/keys" || all[0].actor != "session:"+team {
		t.Fatalf("the newest entry is not the dashboard's key: %+v", all)
	}

	for _, tc := range []struct {
		name  string
		query string
		want  []auditEntry // each matched on its non-empty fields
		every func(auditEntry) bool
	}{
		{"everything", "", []auditEntry{
			{actor: "admin", action: "POST /api/admin/accounts", object: "account:" + team, result: "ok", status: "201"},
			{actor: "admin", action: "POST /api/admin/accounts/{id}/keys", object: "key:" + apiKeyID},
			{actor: "admin", action: "POST /api/admin/accounts/{id}/signin-links", object: "account:" + team},
			{actor: "session:operator", action: "POST /dashboard/operator/accounts", result: "ok"},
			{actor: "session:operator", action: "POST /dashboard/operator/accounts", result: "REFUSED", status: "400"},
			{actor: "session:" + team, account: "Acme", action: "POST /dashboard/team/keys", result: "ok"},
		}, nil},
		{"actor", "?actor=admin", []auditEntry{{action: "POST /api/admin/domains"}},
			func(e auditEntry) bool { return e.actor == "admin" }},
		{"account", "?account=" + team, []auditEntry{{action: "POST /dashboard/team/keys"}},
			func(e auditEntry) bool { return e.account == "Acme" }},
		{"object", "?object=account:" + team, []auditEntry{{action: "POST /api/admin/accounts"}},
			func(e auditEntry) bool { return e.object == "account:"+team }},
		{"result", "?result=REFUSED", []auditEntry{{action: "POST /dashboard/operator/accounts"}},
			func(e auditEntry) bool { return e.result == "REFUSED" }},
		{"two filters", "?actor=session:operator&result=ok", []auditEntry{{action: "POST /dashboard/operator/accounts"}},
			func(e auditEntry) bool { return e.actor == "session:operator" && e.result == "ok" }},
		{"no match", "?actor=nobody", nil, func(auditEntry) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := op.get(auditPath + tc.query)
			if p.status != http.StatusOK {
				t.Fatalf("%d: %s", p.status, p.body)
			}
			rows := p.rows(t)
			for _, w := range tc.want {
				if !hasEntry(rows, w) {
					t.Errorf("no entry like %+v among %+v", w, rows)
				}
			}
			for _, e := range rows {
				if tc.every != nil && !tc.every(e) {
					t.Errorf("an entry the filter excludes: %+v", e)
				}
				if !auditTime.MatchString(e.when) {
					t.Errorf("time %q is not 2006-01-02 15:04:05", e.when)
				}
			}
			if len(rows) == 0 && !strings.Contains(p.body, "No entries") {
				t.Errorf("an empty page does not say so: %s", p.body)
			}
			for _, secret := range []string{apiSecret, dashSecret, linkToken, adminToken} {
				if strings.Contains(p.body, secret) {
					t.Errorf("the page shows a secret %q", secret)
				}
			}
			if strings.Contains(p.body, "<b>Beta</b>") {
				t.Errorf("an account's name is not escaped")
			}
		})
	}

	// What is typed into a filter comes back escaped.
	if p := op.get(auditPath + "?actor=" + url.QueryEscape(`"><script>x</script>`)); strings.Contains(p.body, "<script>x") {
		t.Errorf("a filter is not escaped: %s", p.body)
	}
	if p := op.get(auditPath + "?cursor=abc"); p.status != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d, want 400", p.status)
	}
}

// hasEntry reports whether a row matches every non-empty field of w.
func hasEntry(rows []auditEntry, w auditEntry) bool {
	for _, e := range rows {
		ok := true
		for _, f := range [][2]string{{w.actor, e.actor}, {w.account, e.account}, {w.action, e.action},
			{w.object, e.object}, {w.result, e.result}, {w.status, e.status}} {
			if f[0] != "" && f[0] != f[1] {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// More than a page of entries: "Older entries" leads to the rest, with the
// filters kept, and no entry is shown twice.
func TestOperatorAuditPages(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	for i := range 55 {
		if st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": fmt.Sprint("api", i), "plan": "free"}); st != 201 {
			t.Fatalf("create account: %d %v", st, a)
		}
	}
	for i := range 3 {
		if p := op.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {fmt.Sprint("dash", i)}, "plan": {"free"}}); p.status != http.StatusSeeOther {
			t.Fatalf("create account: %d %s", p.status, p.body)
		}
	}
	for _, tc := range []struct {
		name  string
		query string
		pages []int // rows on each page
		actor string
	}{
		{"everything", "", []int{50, 8}, ""},
		{"admin only", "?actor=admin", []int{50, 5}, "admin"},
		{"operator only", "?actor=session:operator", []int{3}, "session:operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			next := auditPath + tc.query
			var got []int
			for next != "" {
				if len(got) > len(tc.pages) {
					t.Fatalf("more pages than %v", tc.pages)
				}
				p := op.get(next)
				if p.status != http.StatusOK {
					t.Fatalf("%s: %d %s", next, p.status, p.body)
				}
				rows := p.rows(t)
				got = append(got, len(rows))
				for _, e := range rows {
					if seen[e.object] {
						t.Errorf("%s shown twice", e.object)
					}
					seen[e.object] = true
					if tc.actor != "" && e.actor != tc.actor {
						t.Errorf("an entry of %s under actor=%s", e.actor, tc.actor)
					}
				}
				if next = p.older(); next != "" {
					u, err := url.Parse(next)
					if err != nil || u.Path != auditPath || u.Query().Get("cursor") == "" || u.Query().Get("actor") != tc.actor {
						t.Errorf("the older link %q does not carry the cursor and the filters", next)
					}
					if tc.actor == "" && strings.Contains(next, "actor=") {
						t.Errorf("the older link %q carries an empty filter", next)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.pages) {
				t.Errorf("pages of %v rows, want %v", got, tc.pages)
			}
		})
	}
}

// A team member is refused the page and sees nothing of it; a server with
// no audit log says so.
func TestOperatorAuditAccess(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	member := s.browser()
	member.signInTeam(t, team)
	for _, path := range []string{auditPath, auditPath + "?actor=admin", auditPath + "?cursor=9"} {
		p := member.get(path)
		if p.status != http.StatusForbidden || strings.Contains(p.body, "POST /api/admin") || strings.Contains(p.body, "<table") {
			t.Errorf("%s as a team member: %d %s", path, p.status, p.body)
		}
	}
	if p := s.browser().get(auditPath); p.status != http.StatusSeeOther {
		t.Errorf("signed out: %d, want 303 to sign in", p.status)
	}

	bare := newSiteAudited(t, storage.SQLite, 2, "", false)
	op := bare.browser()
	op.signInOperator(t)
	bare.team("Acme", "acme.example.net")
	p := op.get(auditPath)
	if p.status != http.StatusOK || !strings.Contains(p.body, "This server keeps no audit log.") || strings.Contains(p.body, "<table") {
		t.Errorf("without an audit log: %d %s", p.status, p.body)
	}
}
