package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

const regsPath = "/dashboard/operator/acme-registrations"

// The operator sees the acme-dns registrations and deletes one; the admin
// API then lists it no more. A team member sees none of it.
func TestOperatorRegistrations(t *testing.T) {
	t.Parallel()
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := newSite(t, d, 2, "")
			var users []string
			for _, body := range []any{nil, map[string]any{"allowfrom": []string{"192.0.2.0/24"}}} {
				status, r := s.api("POST", "/api/acme/register", "", body)
				if status != http.StatusCreated {
					t.Fatalf("register: %d %v", status, r)
				}
				users = append(users, r["username"].(string))
			}
			op := s.browser()
			op.signInOperator(t)
			if p := op.get("/dashboard/operator"); !strings.Contains(p.body, `href="`+regsPath+`"`) {
				t.Fatalf("the operator page does not link the registrations: %s", p.body)
			}
			p := op.get(regsPath)
			for _, want := range []string{users[0], users[1], "192.0.2.0/24", "anywhere", ".auth.example.org", "127.0.0.0/24"} {
				if p.status != http.StatusOK || !strings.Contains(p.body, want) {
					t.Fatalf("registrations page (%d) lacks %q: %s", p.status, want, p.body)
				}
			}
			if strings.Contains(p.body, "password") {
				t.Errorf("the page shows a password field: %s", p.body)
			}
			done := op.post(regsPath+"/"+users[0]+"/delete", url.Values{"csrf": {p.csrf(t)}})
			if done.status != http.StatusOK || !strings.Contains(done.body, "Registration "+users[0]+" is deleted") ||
				strings.Contains(done.body, `<th scope="row" class="mono">`+users[0]) {
				t.Fatalf("delete: %d %s", done.status, done.body)
			}
			again := op.post(regsPath+"/"+users[0]+"/delete", url.Values{"csrf": {done.csrf(t)}})
			if again.status != http.StatusNotFound || !strings.Contains(again.body, "no acme-dns registration") {
				t.Errorf("deleting again: %d, want 404 saying so", again.status)
			}
			if status, r := s.api("GET", "/api/admin/acme-registrations", adminToken, nil); status != 200 ||
				len(r["registrations"].([]any)) != 1 {
				t.Errorf("admin list after the delete: %d %v, want one", status, r)
			}
			if p := op.post(regsPath+"/"+users[1]+"/delete", url.Values{"csrf": {"forged"}}); p.status == http.StatusOK {
				t.Errorf("a delete with a forged form token was taken")
			}

			team := s.team("Acme", "acme.example.net")
			member := s.browser()
			member.signInTeam(t, team)
			if p := member.get(regsPath); p.status != http.StatusForbidden || strings.Contains(p.body, users[1]) {
				t.Errorf("as a team member: %d %s", p.status, p.body)
			}
		})
	}
}
