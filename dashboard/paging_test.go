package dashboard_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

// mint makes n hostnames for account through the API and returns their ids.
// [P2] teams may register 30 a minute: the counted registrations are
// cleared on the way, as a minute passing would.
func (s *site) mint(account string, profile profile.Profile, n int) []string {
	s.t.Helper()
	if st, a := s.api("PATCH", "/api/admin/accounts/"+account, adminToken, map[string]any{"cap": 1000}); st != 200 {
		s.t.Fatalf("cap: %d %v", st, a)
	}
	key, ip := s.memberKey(account), "192.0.2.1"
	if profile == 1 {
		ip = "93.184.215.14"
	}
	var ids []string
	for i := range n {
		if i%25 == 0 {
			if _, err := s.db.Exec("DELETE FROM rate_events"); err != nil {
				s.t.Fatal(err)
			}
		}
		id, _ := s.hostname(key, ip)
		ids = append(ids, id)
	}
	return ids
}

var (
	olderHosts = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older hostnames</a>`)
	newerHosts = regexp.MustCompile(`<a href="([^"]+)" rel="prev">Newer hostnames</a>`)
	countLine  = regexp.MustCompile(`<p id="count">(Showing [^,]*),`)
)

func link(re *regexp.Regexp, p page) string {
	if m := re.FindStringSubmatch(p.body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// walk follows a list's "Older hostnames" links from first to the last page
// and returns each page's ids (found by row), its count line and the link
// back; every link must carry skip and keep.
func walk(t *testing.T, b *browser, first string, row *regexp.Regexp, keep string) (ids [][]string, counts, newer []string) {
	t.Helper()
	for next := first; next != ""; {
		p := b.get(next)
		if p.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, p.status, p.body)
		}
		var page []string
		for _, m := range row.FindAllStringSubmatch(p.body, -1) {
			page = append(page, m[1])
		}
		ids = append(ids, page)
		c := countLine.FindStringSubmatch(p.body)
		if c == nil {
			t.Fatalf("no count on %s: %s", next, p.body)
		}
		counts, newer = append(counts, c[1]), append(newer, link(newerHosts, p))
		next = link(olderHosts, p)
		if next != "" && (!strings.Contains(next, "skip=") || !strings.Contains(next, keep)) {
			t.Fatalf("the Older link %q lacks skip or %q", next, keep)
		}
		if len(ids) > 10 {
			t.Fatal("more pages than hostnames")
		}
	}
	return ids, counts, newer
}

// every checks that pages list each of want exactly once, and nothing else.
func every(t *testing.T, pages [][]string, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, p := range pages {
		for _, id := range p {
			seen[id]++
		}
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("%s is listed %d times, want once", id, seen[id])
		}
		delete(seen, id)
	}
	if len(seen) > 0 {
		t.Errorf("listed besides: %v", seen)
	}
}

var teamRow = regexp.MustCompile(`<a href="/dashboard/team/hostnames/([^"]+)">`)

// The team view pages through 120 hostnames, 100 at a time; [P1] lists
// count nothing, so they say no total.
func TestTeamHostnamePages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile profile.Profile
		plan    string
		counts  []string
	}{
		{2, "team", []string{"Showing 1–100 of 120", "Showing 101–120 of 120"}},
		{1, "business", []string{"Showing 1–100", "Showing 101–120"}},
	} {
		t.Run("P"+tc.profile.String(), func(t *testing.T) {
			t.Parallel()
			s := newSite(t, storage.SQLite, tc.profile, "")
			st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": "Acme", "plan": tc.plan})
			if st != 201 {
				t.Fatalf("account: %d %v", st, a)
			}
			acme := a["id"].(string)
			if tc.profile == 2 {
				if st, d := s.api("POST", "/api/admin/domains", adminToken, map[string]any{"name": "acme.example.net", "account_id": acme}); st != 201 {
					t.Fatalf("domain: %d %v", st, d)
				}
			}
			ids := s.mint(acme, tc.profile, 120)
			b := s.browser()
			b.signInTeam(t, acme)
			pages, counts, newer := walk(t, b, "/dashboard/team", teamRow, "/dashboard/team?")
			every(t, pages, ids)
			if len(pages) != 2 || len(pages[0]) != 100 {
				t.Fatalf("pages of %d", len(pages[0]))
			}
			if strings.Join(counts, "|") != strings.Join(tc.counts, "|") {
				t.Errorf("counts %q, want %q", counts, tc.counts)
			}
			if newer[0] != "" || newer[1] != "/dashboard/team" {
				t.Errorf("Newer links %q", newer)
			}
			// Past the end: nothing listed, and the way back.
			p := b.get("/dashboard/team?skip=500")
			if p.status != 200 || teamRow.MatchString(p.body) || link(newerHosts, p) != "/dashboard/team?skip=20" && tc.profile == 2 {
				t.Errorf("past the end: %d, newer %q", p.status, link(newerHosts, p))
			}
		})
	}
}

var opRow = regexp.MustCompile(`href="/dashboard/operator/hostnames/([^"/]+)/terminate`)

// The operator's list pages through 60 hostnames of two teams, 50 at a
// time, merged or filtered by team; the links keep the filter.
func TestOperatorHostnamePages(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	acme, globex := s.team("Acme", "acme.example.net"), s.team("Globex", "globex.example.net")
	acmeIDs := s.mint(acme, 2, 55)
	globexIDs := s.mint(globex, 2, 5)
	op := s.browser()
	op.signInOperator(t)
	list := "/dashboard/operator/hostnames"
	for _, tc := range []struct {
		name, first, keep string
		want              []string
		counts            []string
		back              string // the last page's Newer link, "" for one page
	}{
		{"every team", list, list + "?skip=", append(append([]string{}, acmeIDs...), globexIDs...),
			[]string{"Showing 1–50 of 60", "Showing 51–60 of 60"}, list},
		{"one team", list + "?team=" + acme, list + "?team=" + acme + "&skip=", acmeIDs,
			[]string{"Showing 1–50 of 55", "Showing 51–55 of 55"}, list + "?team=" + acme},
		{"a small team", list + "?team=" + globex, "", globexIDs, []string{"Showing 5 of 5"}, ""},
	} {
		pages, counts, newer := walk(t, op, tc.first, opRow, tc.keep)
		every(t, pages, tc.want)
		if strings.Join(counts, "|") != strings.Join(tc.counts, "|") {
			t.Errorf("%s: counts %q, want %q", tc.name, counts, tc.counts)
		}
		if newer[len(newer)-1] != tc.back {
			t.Errorf("%s: Newer link %q, want %q", tc.name, newer[len(newer)-1], tc.back)
		}
	}

	// A hostname of the second page can be terminated from there, and the
	// list comes back at that page.
	last := acmeIDs[0]
	confirm := "/dashboard/operator/hostnames/" + last + "/terminate?team=" + acme + "&skip=50"
	op.get(list+"?team="+acme+"&skip=50").has(t, `href="`+strings.ReplaceAll(confirm, "&", "&amp;")+`"`)
	p := op.get(confirm)
	p.has(t, `name="skip" value="50"`, `href="/dashboard/operator/hostnames?team=`+acme+`&amp;skip=50"`)
	p = op.post("/dashboard/operator/hostnames/"+last+"/terminate", map[string][]string{
		"csrf": {p.csrf(t)}, "team": {acme}, "skip": {"50"}, "confirm": {"yes"}})
	p.has(t, "is terminated.", "Showing 51–54 of 54")
}

// A skip that is not a whole number of 0 or more is the 400 page.
func TestBadSkip(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	acme := s.team("Acme", "acme.example.net")
	member, op := s.browser(), s.browser()
	member.signInTeam(t, acme)
	op.signInOperator(t)
	for _, skip := range []string{"abc", "-1", "1.5", "0x10", "%20"} {
		for _, tc := range []struct {
			b    *browser
			path string
		}{
			{member, "/dashboard/team?skip="},
			{op, "/dashboard/operator/hostnames?skip="},
			{op, "/dashboard/operator/hostnames?team=" + acme + "&skip="},
		} {
			if p := tc.b.get(tc.path + skip); p.status != http.StatusBadRequest || !strings.Contains(p.body, "skip must be a whole number") {
				t.Errorf("%s%s: %d", tc.path, skip, p.status)
			}
		}
	}
	// Too large is still a number: an empty page past the end.
	if p := member.get("/dashboard/team?skip=99999999999999999999999"); p.status != 200 {
		t.Errorf("a huge skip: %d", p.status)
	}
}
