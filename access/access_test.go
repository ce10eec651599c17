package access

import (
	"strings"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
)

func TestAllowsAndRequire(t *testing.T) {
	h1 := Target{Hostname: "h_1", Name: "a.example.org", Domain: "example.org"}
	h2 := Target{Hostname: "h_2", Name: "b.example.net", Domain: "example.net"}
	mint := Target{Domain: "example.org"}
	team := &Principal{Scopes: All()}
	dom := &Principal{Scopes: []Scope{{Scope: HostnamesWrite, Domain: "example.org"}, {Scope: HostnamesRead}}}
	host := &Principal{Scopes: []Scope{{Scope: DNS01Write, Hostname: "h_1"}}}

	tests := []struct {
		name  string
		p     *Principal
		scope string
		t     Target
		ok    bool
		msg   string
	}{
		{"team write", team, HostnamesWrite, h2, true, ""},
		{"team mint", team, HostnamesWrite, mint, true, ""},
		{"domain in reach", dom, HostnamesWrite, h1, true, ""},
		{"domain mint", dom, HostnamesWrite, mint, true, ""},
		{"domain out of reach", dom, HostnamesWrite, h2, false, "limited to domain example.org; it does not reach hostname b.example.net"},
		{"domain read team-wide", dom, HostnamesRead, h2, true, ""},
		{"domain lacks dns01", dom, DNS01Write, h1, false, "lacks the dns01:write scope for hostname a.example.org; it is limited to hostnames:write on domain example.org, hostnames:read on the whole team"},
		{"hostname own", host, DNS01Write, h1, true, ""},
		{"hostname other", host, DNS01Write, h2, false, "limited to hostname h_1"},
		{"hostname cannot write", host, HostnamesWrite, h1, false, "lacks the hostnames:write scope for hostname a.example.org; it is limited to dns01:write on hostname h_1"},
		{"hostname cannot mint", host, DNS01Write, mint, false, "does not reach domain example.org"},
	}
	for _, tc := range tests {
		err := tc.p.Require(tc.scope, tc.t)
		if (err == nil) != tc.ok || tc.p.Allows(tc.scope, tc.t) != tc.ok {
			t.Errorf("%s: Require = %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if err != nil {
			p, _ := apierror.As(err)
			if httperr.Status(p.Code) != 403 || p.Code != apierror.CodeForbidden || !strings.Contains(p.Message, tc.msg) {
				t.Errorf("%s: %d %s %q, want 403 FORBIDDEN containing %q", tc.name, httperr.Status(p.Code), p.Code, p.Message, tc.msg)
			}
		}
	}
}

func TestReach(t *testing.T) {
	p := &Principal{Scopes: []Scope{{Scope: HostnamesRead, Domain: "example.org"}, {Scope: HostnamesRead, Hostname: "h_9"}, {Scope: HostnamesWrite}}}
	r := p.Reach(HostnamesRead)
	if r.Team || len(r.Domains) != 1 || len(r.Hostnames) != 1 {
		t.Fatalf("read reach %+v", r)
	}
	if !p.Reach(HostnamesWrite).Team || !p.Reach(DNS01Write).Empty() {
		t.Fatal("write reach or dns01 reach wrong")
	}
}

func TestParseScopes(t *testing.T) {
	if got := ParseScopes(""); len(got) != 3 {
		t.Fatalf("empty: %v", got)
	}
	if got := ParseScopes(`[{"scope":"dns01:write","hostname":"h_1"}]`); len(got) != 1 || got[0].Hostname != "h_1" {
		t.Fatalf("one: %v", got)
	}
}

// A key narrowed to a hostname names it as a person knows it, the id in
// brackets.
func TestRequireNamesHostnames(t *testing.T) {
	t.Parallel()
	p := &Principal{AccountID: "acc", Scopes: []Scope{{Scope: DNS01Write, Hostname: "h_1"}},
		Names: map[string]string{"h_1": "a.example.org"}}
	err := p.Require(HostnamesWrite, Target{Hostname: "h_1", Name: "a.example.org", Domain: "example.org"})
	if err == nil || !strings.Contains(err.Error(), "dns01:write on hostname a.example.org (h_1)") {
		t.Errorf("Require = %v, want the limit named a.example.org (h_1)", err)
	}
}
