package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// Closing a team from its page asks first, then closes it through the
// rule DELETE /api/admin/accounts/{id} calls; the page then shows it
// closed, without its forms.
func TestOperatorCloseAccountPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	team := s.team("Acme", "acme.example.net")
	key, _ := s.teamKey(team, "ci")
	s.hostname(key, "192.0.2.1")

	path := "/dashboard/operator/accounts/" + team
	op.get(path).has(t, `href="`+path+`/close"`, "Close Acme…")
	op.post(path+"/close", url.Values{"csrf": {csrf}}).redirectsTo(t, path+"/close")
	if a := s.adminAccount(team); a["status"] != "active" {
		t.Fatalf("closed without confirmation: %v", a)
	}
	op.get(path+"/close").has(t, "Close Acme?", "its 1 active hostnames are released", `name="confirm" value="yes"`)
	if p := op.post(path+"/close", url.Values{"confirm": {"yes"}}); p.status != http.StatusForbidden {
		t.Errorf("a close without the CSRF token: %d", p.status)
	}

	p := op.post(path+"/close", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if p.status != 200 {
		t.Fatalf("close: %d %s", p.status, p.body)
	}
	p.has(t, "The account is closed: 1 hostnames released, 1 API keys and 0 TSIG keys revoked", `status-closed">closed<`)
	if strings.Contains(p.body, "Save plan and cap") || strings.Contains(p.body, "Close Acme…") {
		t.Errorf("a closed account's page still offers changes")
	}
	if a := s.adminAccount(team); a["status"] != "closed" {
		t.Errorf("after the close: %v", a)
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", key, nil); st != 401 {
		t.Errorf("the closed team's key: %d", st)
	}
	op.get(path+"/close").redirectsTo(t, path)
}

// The operator page lists accounts newest first through the rule the
// API's list calls: filtered by name and status, a page at a time.
func TestOperatorAccountFilters(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	op := s.browser()
	op.signInOperator(t)
	var ids []string
	for _, name := range []string{"Old", "Mid", "New"} {
		st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": name, "plan": "free"})
		if st != 201 {
			t.Fatal(st, a)
		}
		ids = append(ids, a["id"].(string))
		time.Sleep(2 * time.Millisecond)
	}
	s.api("PATCH", "/api/admin/accounts/"+ids[1], adminToken, map[string]any{"status": "suspended"})

	p := op.get("/dashboard/operator")
	if i, j, k := strings.Index(p.body, ">New<"), strings.Index(p.body, ">Mid<"), strings.Index(p.body, ">Old<"); !(i >= 0 && i < j && j < k) {
		t.Errorf("not newest first: %d %d %d", i, j, k)
	}
	p = op.get("/dashboard/operator?status=suspended")
	p.has(t, ">Mid<", `status-suspended">suspended<`)
	if strings.Contains(p.body, ">Old<") || strings.Contains(p.body, ">New<") {
		t.Errorf("the status filter lets others through")
	}
	p = op.get("/dashboard/operator?name=Old")
	p.has(t, ">Old<")
	op.get("/dashboard/operator?name=Nobody").has(t, "None match.")
	if p := op.get("/dashboard/operator?status=gone"); p.status != http.StatusBadRequest {
		t.Errorf("an unknown status: %d", p.status)
	}
}

// Finding who holds a name or an address, released ones too, with the
// owner linked.
func TestOperatorFindPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	op.signInOperator(t)
	acme := s.team("Acme", "acme.example.net")
	key, _ := s.teamKey(acme, "ci")
	id, name := s.hostname(key, "192.0.2.7")
	if st, _ := s.api("DELETE", "/api/v1/hostnames/"+id, key, nil); st != 200 {
		t.Fatal("release", st)
	}
	_, name2 := s.hostname(key, "192.0.2.7")

	for _, q := range []string{"192.0.2.7", strings.ToUpper(name)} {
		p := op.get("/dashboard/operator/find?q=" + url.QueryEscape(q))
		p.has(t, name, `href="/dashboard/operator/accounts/`+acme+`">Acme<`)
		if q == "192.0.2.7" {
			p.has(t, name2, `status-released">released<`)
		}
	}
	op.get("/dashboard/operator/find?account="+acme).has(t, name, name2)
	op.get("/dashboard/operator/find?q=nobody.acme.example.net").has(t, "No hostname holds it.")
	if p := op.get("/dashboard/operator/find?q=-bad-"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "is not a domain name") {
		t.Errorf("a bad name: %d", p.status)
	}
	op.get("/dashboard/operator").has(t, `href="/dashboard/operator/find"`)
}
