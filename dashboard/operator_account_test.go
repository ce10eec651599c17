package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

// adminAccount reads an account through the admin API.
func (s *site) adminAccount(id string) map[string]any {
	s.t.Helper()
	st, a := s.api("GET", "/api/admin/accounts/"+id, adminToken, nil)
	if st != 200 {
		s.t.Fatalf("get account: %d %v", st, a)
	}
	return a
}

// The account form changes plan, cap and [P2] billing through the API's
// rule, and shows its refusals next to the field, changing nothing.
func TestOperatorChangeAccount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile       profile.Profile
		plan, newPlan string
		badPlan       string
		billing       bool     // after the change, the box left unticked ([P1] has none: unchanged)
		shown         []string // on the page after the change
		form          []string // on the form
	}{
		{2, "team", "gold", "Gold Plan", false,
			[]string{`id="plan">gold<`, `id="cap">7 active hostnames<`, `id="billing">no`}, []string{`id="change-billing"`}},
		{1, "free", "pro", "gold", true,
			[]string{`id="plan">pro<`, `id="cap">7 active hostnames<`}, []string{`<select id="change-plan"`}},
	} {
		t.Run(tc.plan, func(t *testing.T) {
			t.Parallel()
			s := newSite(t, storage.SQLite, tc.profile, "")
			st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": "Acme", "plan": tc.plan})
			if st != 201 {
				t.Fatalf("account: %d %v", st, a)
			}
			id := a["id"].(string)
			path := "/dashboard/operator/accounts/" + id
			op := s.browser()
			csrf := op.signInOperator(t)
			p := op.get(path)
			p.has(t, append([]string{`action="` + path + `"`, `id="change-cap"`}, tc.form...)...)
			before := s.adminAccount(id)

			for _, bad := range []struct {
				name, field, id string
				form            url.Values
				api             map[string]any // the same change through the API, for its message
			}{
				{"negative cap", "cap", "change-cap-error", url.Values{"plan": {tc.plan}, "cap": {"-1"}}, map[string]any{"cap": -1}},
				{"bad plan", "plan", "change-plan-error", url.Values{"plan": {tc.badPlan}}, map[string]any{"plan": tc.badPlan}},
			} {
				msg := s.apiError("PATCH", "/api/admin/accounts/"+id, adminToken, bad.api)
				bad.form.Set("csrf", csrf)
				errorNext(t, op.post(path, bad.form), http.StatusBadRequest, bad.id, msg)
			}
			// Not a number at all: refused before the rules, next to the field.
			p = op.post(path, url.Values{"csrf": {csrf}, "plan": {tc.newPlan}, "cap": {"lots"}})
			errorNext(t, p, http.StatusBadRequest, "change-cap-error", "cap must be a whole number from 0 to 2147483647, or empty to keep it")
			p.has(t, `value="lots"`)
			if after := s.adminAccount(id); after["plan"] != before["plan"] || after["cap"] != before["cap"] || after["billing"] != before["billing"] {
				t.Fatalf("a refused form changed the account: %v, was %v", after, before)
			}

			op.post(path, url.Values{"csrf": {csrf}, "plan": {tc.newPlan}, "cap": {"7"}}).redirectsTo(t, path)
			op.get(path).has(t, append(tc.shown, `name="cap" type="number" min="0" inputmode="numeric" value="7"`)...)
			after := s.adminAccount(id)
			if after["plan"] != tc.newPlan || after["cap"] != float64(7) || after["billing"] != tc.billing {
				t.Errorf("after the change: %v", after)
			}
			// An empty cap keeps the override.
			op.post(path, url.Values{"csrf": {csrf}, "plan": {tc.newPlan}, "cap": {""}, "billing": {"on"}}).redirectsTo(t, path)
			if after := s.adminAccount(id); after["cap"] != float64(7) || after["billing"] != true {
				t.Errorf("after an empty cap: %v", after)
			}
		})
	}
}

// The account form needs the session's CSRF token and the operator.
func TestOperatorChangeAccountGuards(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	acme := s.team("Acme", "acme.example.net")
	path := "/dashboard/operator/accounts/" + acme
	op, member := s.browser(), s.browser()
	op.signInOperator(t)
	memberCSRF := member.signInTeam(t, acme)
	before := s.adminAccount(acme)
	change := url.Values{"plan": {"gold"}, "cap": {"3"}}
	for _, tc := range []struct {
		name string
		b    *browser
		csrf string
	}{
		{"no token", op, ""},
		{"a forged token", op, "forged"},
		{"a team session's token", op, memberCSRF},
		{"a team member", member, memberCSRF},
	} {
		f := url.Values{}
		for k, v := range change {
			f[k] = v
		}
		if tc.csrf != "" {
			f.Set("csrf", tc.csrf)
		}
		if p := tc.b.post(path, f); p.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, p.status)
		}
	}
	if after := s.adminAccount(acme); after["plan"] != before["plan"] || after["cap"] != before["cap"] || after["billing"] != before["billing"] {
		t.Errorf("changed: %v, was %v", after, before)
	}
}
