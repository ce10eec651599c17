package dashboard_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// liveHostname mints a hostname with key and marks it live, as the
// nameserver watch would (nothing runs it here).
func (s *site) liveHostname(key, subdomain string) string {
	s.t.Helper()
	st, h := s.api("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.51.100.7", "subdomain": subdomain})
	if st != 201 {
		s.t.Fatalf("hostname: %d %v", st, h)
	}
	id := h["id"].(string)
	if _, err := s.db.Exec("UPDATE hostnames SET status = 'live' WHERE id = ?", id); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// apiRecords is a hostname's records as the API lists them, by id.
func (s *site) apiRecords(key, id string) map[string]map[string]any {
	s.t.Helper()
	st, rs := s.api("GET", "/api/v1/hostnames/"+id+"/records", key, nil)
	if st != 200 {
		s.t.Fatalf("records: %d %v", st, rs)
	}
	out := map[string]map[string]any{}
	for _, r := range rs["records"].([]any) {
		r := r.(map[string]any)
		out[r["id"].(string)] = r
	}
	return out
}

const (
	sha256Hex = "8d02536c887482bc34ff54e41d2ba659bf85b341a0a20afadb5813dcdbcdb4e3"
	sha1Hex   = "dd465c09cfa51fb45020cc83316fff21b9ec74ac"
)

// TLSA, SSHFP, HTTPS and SVCB from their forms: the API's rules and words
// next to the field, and what is stored is what the API stores for the
// same input.
func TestTeamRecordTypes(t *testing.T) {
	t.Parallel()
	s := newSealedSite(t)
	team := s.team("Acme", "acme.example.net")
	key := s.memberKey(team)
	dom := s.adminDomain("acme.example.net")["id"].(string)
	for _, patch := range []map[string]any{{"dnssec": true}, {"ds_published": true}} { // TLSA needs both
		if st, d := s.api("PATCH", "/api/admin/domains/"+dom, adminToken, patch); st != 200 {
			t.Fatalf("domain %v: %d %v", patch, st, d)
		}
	}
	web := s.liveHostname(key, "web")       // written through the dashboard
	viaAPI := s.liveHostname(key, "viaapi") // the same input through the API
	b := s.browser()
	csrf := b.signInTeam(t, team)
	post := func(f url.Values) page {
		g := url.Values{"csrf": {csrf}}
		for k, v := range f {
			g[k] = v
		}
		return b.post("/dashboard/team/hostnames/"+web+"/records", g)
	}

	for _, tc := range []struct {
		form url.Values
		json map[string]any
		id   string // "": a form-wide error
	}{
		{url.Values{"type": {"TLSA"}, "name": {"www"}, "usage": {"3"}, "selector": {"1"}, "matching_type": {"1"}, "association": {sha256Hex}},
			map[string]any{"type": "TLSA", "name": "www", "usage": 3, "selector": 1, "matching_type": 1, "association": sha256Hex}, "rec-TLSA-name-error"},
		{url.Values{"type": {"TLSA"}, "name": {"_443._tcp"}, "usage": {"7"}, "selector": {"1"}, "matching_type": {"1"}, "association": {sha256Hex}},
			map[string]any{"type": "TLSA", "name": "_443._tcp", "usage": 7, "selector": 1, "matching_type": 1, "association": sha256Hex}, "rec-TLSA-usage-error"},
		{url.Values{"type": {"TLSA"}, "name": {"_443._tcp"}, "usage": {"3"}, "selector": {"1"}, "matching_type": {"1"}, "association": {"abcd"}},
			map[string]any{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": "abcd"}, "rec-TLSA-association-error"},
		{url.Values{"type": {"SSHFP"}, "algorithm": {"5"}, "fptype": {"2"}, "fingerprint": {sha256Hex}},
			map[string]any{"type": "SSHFP", "algorithm": 5, "fptype": 2, "fingerprint": sha256Hex}, "rec-SSHFP-algorithm-error"},
		{url.Values{"type": {"SSHFP"}, "algorithm": {"4"}, "fptype": {"2"}, "fingerprint": {strings.ToUpper(sha256Hex)}},
			map[string]any{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": strings.ToUpper(sha256Hex)}, "rec-SSHFP-fingerprint-error"},
		{url.Values{"type": {"HTTPS"}, "priority": {"0"}, "target": {"cdn.example.com"}, "params.alpn": {"h2"}},
			map[string]any{"type": "HTTPS", "priority": 0, "target": "cdn.example.com", "params": map[string]any{"alpn": []string{"h2"}}}, ""},
		{url.Values{"type": {"HTTPS"}, "priority": {"1"}, "target": {"."}, "params.alpn": {"h2,,h3"}},
			map[string]any{"type": "HTTPS", "priority": 1, "target": ".", "params": map[string]any{"alpn": []string{"h2", "", "h3"}}}, "rec-HTTPS-params.alpn-error"},
		{url.Values{"type": {"HTTPS"}, "priority": {"1"}, "target": {"."}, "params.ipv4hint": {"2001:db8::1"}},
			map[string]any{"type": "HTTPS", "priority": 1, "target": ".", "params": map[string]any{"ipv4hint": []string{"2001:db8::1"}}}, "rec-HTTPS-params.ipv4hint-error"},
		{url.Values{"type": {"SVCB"}, "priority": {"1"}},
			map[string]any{"type": "SVCB", "priority": 1}, "rec-SVCB-target-error"},
		{url.Values{"type": {"SVCB"}, "priority": {"1"}, "target": {"."}, "params.alpn": {"dot"}, "params.mandatory": {"port"}},
			map[string]any{"type": "SVCB", "priority": 1, "target": ".", "params": map[string]any{"alpn": []string{"dot"}, "mandatory": []string{"port"}}}, "rec-SVCB-params.mandatory-error"},
		{url.Values{"type": {"SVCB"}, "priority": {"1"}, "target": {"."}, "params.noDefaultAlpn": {"true"}},
			map[string]any{"type": "SVCB", "priority": 1, "target": ".", "params": map[string]any{"noDefaultAlpn": true}}, "rec-SVCB-params.noDefaultAlpn-error"},
	} {
		msg := s.apiError("POST", "/api/v1/hostnames/"+viaAPI+"/records", key, tc.json)
		id := tc.id
		if id == "" {
			id = "rec-" + tc.form.Get("type") + "-error"
		}
		errorNext(t, post(tc.form), 400, id, msg)
	}
	if n := s.count("records"); n != 0 {
		t.Fatalf("%d records after refused forms", n)
	}
	p := post(url.Values{"type": {"SSHFP"}, "algorithm": {"four"}})
	if p.status != 400 || !strings.Contains(p.body, `id="rec-SSHFP-algorithm-error"`) {
		t.Errorf("an algorithm that is not a number: %d", p.status)
	}

	for _, tc := range []struct {
		form url.Values
		json map[string]any
		show string // on the page, in zone-file form
	}{
		{url.Values{"type": {"TLSA"}, "name": {"_443._tcp"}, "usage": {"3"}, "selector": {"1"}, "matching_type": {"1"}, "association": {sha256Hex}},
			map[string]any{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": sha256Hex},
			"3 1 1 " + sha256Hex},
		{url.Values{"type": {"SSHFP"}, "algorithm": {"4"}, "fptype": {"1"}, "fingerprint": {sha1Hex}},
			map[string]any{"type": "SSHFP", "algorithm": 4, "fptype": 1, "fingerprint": sha1Hex},
			"4 1 " + strings.ToUpper(sha1Hex)}, // as zone files write it
		{url.Values{"type": {"HTTPS"}, "priority": {"1"}, "target": {"."}, "params.alpn": {"h2, h3"}, "params.port": {"8443"},
			"params.ipv4hint": {"192.0.2.1"}, "params.mandatory": {"alpn"}},
			map[string]any{"type": "HTTPS", "priority": 1, "target": ".", "params": map[string]any{"alpn": []string{"h2", "h3"}, "port": 8443,
				"ipv4hint": []string{"192.0.2.1"}, "mandatory": []string{"alpn"}}},
			`1 . mandatory=&#34;alpn&#34; alpn=&#34;h2,h3&#34; port=&#34;8443&#34; ipv4hint=&#34;192.0.2.1&#34;`},
		{url.Values{"type": {"SVCB"}, "name": {"_dns"}, "priority": {"2"}, "target": {"dns.example.com"}, "params.alpn": {"dot"},
			"params.noDefaultAlpn": {"true"}, "params.ipv6hint": {"2001:DB8::1"}, "params.ech": {"AQID"}},
			map[string]any{"type": "SVCB", "name": "_dns", "priority": 2, "target": "dns.example.com", "params": map[string]any{"alpn": []string{"dot"},
				"noDefaultAlpn": true, "ipv6hint": []string{"2001:DB8::1"}, "ech": "AQID"}},
			`2 dns.example.com. alpn=&#34;dot&#34; no-default-alpn=&#34;&#34;`},
	} {
		before := s.apiRecords(key, web)
		post(tc.form).redirectsTo(t, "/dashboard/team/hostnames/"+web)
		st, want := s.api("POST", "/api/v1/hostnames/"+viaAPI+"/records", key, tc.json)
		if st != 201 {
			t.Fatalf("the API refuses %v: %d %v", tc.json, st, want)
		}
		after := s.apiRecords(key, web)
		if len(after) != len(before)+1 {
			t.Fatalf("%s: %d records, want %d", tc.form.Get("type"), len(after), len(before)+1)
		}
		for id, got := range after {
			if before[id] != nil {
				continue
			}
			name := strings.Replace(want["name"].(string), "viaapi.acme", "web.acme", 1)
			if got["type"] != want["type"] || got["name"] != name || !reflect.DeepEqual(got["data"], want["data"]) {
				t.Errorf("stored %v, the API stores %v for the same input", got, want)
			}
		}
		if p := b.get("/dashboard/team/hostnames/" + web); !strings.Contains(p.body, tc.show) {
			t.Errorf("the page does not list %s", tc.show)
		}
	}
}

// A record edited in place: its form shows the stored value, a change
// keeps the id, type and name, and a refused one shows the API's words for
// the same PUT and changes nothing.
func TestTeamRecordEdit(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	key := s.memberKey(team)
	id := s.liveHostname(key, "web")
	recs := map[string]string{}
	for _, body := range []map[string]any{
		{"type": "TXT", "text": "first value"},
		{"type": "MX", "name": "mail", "preference": 10, "exchange": "mx1.example.com"},
	} {
		st, r := s.api("POST", "/api/v1/hostnames/"+id+"/records", key, body)
		if st != 201 {
			t.Fatalf("record: %d %v", st, r)
		}
		recs[body["type"].(string)] = r["id"].(string)
	}
	b := s.browser()
	csrf := b.signInTeam(t, team)
	base := "/dashboard/team/hostnames/" + id
	edit := func(typ string) string { return base + "/records/" + recs[typ] + "/edit" }

	p := b.get(base)
	for _, rid := range recs {
		if !strings.Contains(p.body, `href="`+base+`/records/`+rid+`/edit#edit-h"`) {
			t.Errorf("the page has no Edit for %s", rid)
		}
	}
	b.get(edit("TXT")).has(t, `id="edit-text" name="text" type="text" class="mono" autocomplete="off" value="first value"`,
		`action="`+edit("TXT")+`"`)
	b.get(edit("MX")).has(t, `id="edit-preference" name="preference"`, `value="10"`, `value="mx1.example.com"`,
		"Edit MX record mail.web.acme.example.net")

	// Refused: the API's words next to the field, nothing changed.
	before := s.apiRecords(key, id)
	for _, tc := range []struct {
		typ  string
		form url.Values
		json map[string]any
		id   string
	}{
		{"TXT", url.Values{"text": {strings.Repeat("x", 256)}}, map[string]any{"type": "TXT", "text": strings.Repeat("x", 256)}, "edit-text-error"},
		{"MX", url.Values{"preference": {"20"}}, map[string]any{"type": "MX", "preference": 20}, "edit-exchange-error"},
		{"MX", url.Values{"preference": {"1"}, "exchange": {"."}}, map[string]any{"type": "MX", "preference": 1, "exchange": "."}, "edit-preference-error"},
	} {
		msg := s.apiError("PUT", "/api/v1/hostnames/"+id+"/records/"+recs[tc.typ], key, tc.json)
		tc.form.Set("csrf", csrf)
		tc.form.Set("type", tc.typ)
		errorNext(t, b.post(edit(tc.typ), tc.form), 400, tc.id, msg)
	}
	p = b.post(edit("MX"), url.Values{"csrf": {csrf}, "type": {"MX"}, "preference": {"high"}, "exchange": {"mx2.example.com"}})
	if p.status != 400 || !strings.Contains(p.body, `id="edit-preference-error"`) || !strings.Contains(p.body, `value="mx2.example.com"`) {
		t.Errorf("a preference that is not a number: %d", p.status)
	}
	if after := s.apiRecords(key, id); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused edits changed records:\n%v\n%v", before, after)
	}

	// Saved: the new value, the same id, type and name.
	b.post(edit("TXT"), url.Values{"csrf": {csrf}, "type": {"TXT"}, "text": {" second value "}}).redirectsTo(t, base)
	b.post(edit("MX"), url.Values{"csrf": {csrf}, "type": {"MX"}, "preference": {"20"}, "exchange": {"mx2.example.com"}}).redirectsTo(t, base)
	after := s.apiRecords(key, id)
	if len(after) != 2 {
		t.Fatalf("records after editing: %v", after)
	}
	for typ, want := range map[string]map[string]any{
		"TXT": {"name": "web.acme.example.net", "data": map[string]any{"text": " second value "}},
		"MX":  {"name": "mail.web.acme.example.net", "data": map[string]any{"preference": float64(20), "exchange": "mx2.example.com"}},
	} {
		got := after[recs[typ]]
		if got == nil || got["type"] != typ || got["name"] != want["name"] || !reflect.DeepEqual(got["data"], want["data"]) {
			t.Errorf("%s after editing: %v, want %v", typ, got, want)
		}
	}
	b.get(base).has(t, "&#34; second value &#34;", "20 mx2.example.com.")

	// A type that is not the record's is the service's refusal.
	msg := s.apiError("PUT", "/api/v1/hostnames/"+id+"/records/"+recs["TXT"], key, map[string]any{"type": "CAA", "flags": 0, "tag": "issue", "value": "x"})
	errorNext(t, b.post(edit("TXT"), url.Values{"csrf": {csrf}, "type": {"CAA"}, "flags": {"0"}, "tag": {"issue"}, "value": {"x"}}), 400, "edit-error", msg)
	if p := b.get(base + "/records/r_none/edit"); p.status != http.StatusNotFound {
		t.Errorf("editing no record: %d", p.status)
	}
}
