package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/addrclass"
)

// /openapi.json and /llms-full.txt describe every endpoint that exists.
func TestDocuments(t *testing.T) {
	s := start(t, options{})
	r := s.must(200, "GET", "/openapi.json", "", nil)
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct{ Version string }
		Paths   map[string]map[string]struct {
			Responses map[string]any
		}
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Fatalf("openapi %q version %q", doc.OpenAPI, doc.Info.Version)
	}
	endpoints := []string{
		"POST /api/v1/hostnames", "GET /api/v1/hostnames", "GET /api/v1/hostnames/{id}",
		"PUT /api/v1/hostnames/{id}", "POST /api/v1/hostnames/{id}/renew", "DELETE /api/v1/hostnames/{id}",
		"GET /api/health", "POST /api/admin/accounts", "GET /api/admin/accounts/{id}", "PATCH /api/admin/accounts/{id}",
		"POST /api/admin/accounts/{id}/keys", "GET /api/admin/accounts/{id}/keys", "DELETE /api/admin/keys/{key_id}",
		"POST /api/admin/domains", "GET /api/admin/domains", "PATCH /api/admin/domains/{id}",
		"POST /api/admin/accounts/{id}/signin-links", "GET /api/admin/accounts/{id}/sessions",
		"DELETE /api/admin/accounts/{id}/sessions", "DELETE /api/admin/accounts/{id}/sessions/{session_id}",
		"DELETE /api/admin/accounts/{id}/signin-links/{link_id}",
		"GET /nic/update", "GET /api/nic/update", "GET /api/v1/myip",
		"GET /api/admin/accounts", "DELETE /api/admin/accounts/{id}", "GET /api/admin/hostnames",
	}
	llms := string(s.must(200, "GET", "/llms-full.txt", "", nil).raw)
	for _, e := range endpoints {
		method, path, _ := strings.Cut(e, " ")
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("openapi.json lacks %s", e)
			continue
		}
		if len(op.Responses) < 2 && path != "/api/health" && path != "/api/v1/myip" {
			t.Errorf("%s documents no error responses", e)
		}
		if !strings.Contains(llms, "### "+e+"\n") {
			t.Errorf("llms-full.txt lacks %s", e)
		}
		// The endpoint really exists: it does not answer 404 "no such endpoint".
		if rr := s.do(method, strings.NewReplacer("{id}", "x", "{key_id}", "x", "{session_id}", "x", "{link_id}", "x").Replace(path), "", nil); strings.Contains(rr.str("error"), "no such endpoint") {
			t.Errorf("%s is documented but not served", e)
		}
	}
	for _, name := range []string{"Hostname", "HostnameList", "Error", "CreateHostname", "UpdateHostname", "Released"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("schema %s missing", name)
		}
		if !strings.Contains(llms, "### "+name+"\n") {
			t.Errorf("llms-full.txt lacks schema %s", name)
		}
	}
}

// The documents describe both profiles; each deployment serves its own
// profile's routes and answers 404 for the other's.
func TestDocumentsBothProfiles(t *testing.T) {
	for _, profile := range []int{1, 2} {
		s := start(t, options{profile: profile})
		var doc struct {
			Paths map[string]map[string]struct {
				Profile int `json:"x-profile"`
			}
		}
		if err := json.Unmarshal(s.must(200, "GET", "/openapi.json", "", nil).raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/api/v1/hostnames/{id}/renew", "/api/v1/domains/{id}", "/api/admin/hostnames/{id}/suspend"} {
			if len(doc.Paths[p]) == 0 {
				t.Errorf("profile %d: openapi.json lacks %s", profile, p)
			}
		}
		for path, ops := range doc.Paths {
			for method, op := range ops {
				if op.Profile == 0 {
					continue
				}
				r := s.do(strings.ToUpper(method), strings.NewReplacer("{id}", "x", "{key_id}", "x", "{session_id}", "x", "{link_id}", "x").Replace(path), "", nil)
				served := !strings.Contains(r.str("error"), "no such endpoint")
				if served != (op.Profile == profile) {
					t.Errorf("profile %d: %s %s (profile %d only) served=%v", profile, method, path, op.Profile, served)
				}
			}
		}
	}
}

// Every address the documents and /llms-full.txt give as a hostname's is one
// the service serves as a public address: an example a reader copies must
// not answer 403 or !donator. The one exception is the [P2] example of a
// private-class hostname, which says so.
func TestDocumentedAddressesArePublic(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	docs := map[string][]byte{"/llms-full.txt": s.must(200, "GET", "/llms-full.txt", "", nil).raw}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = b
	}
	private := map[string]bool{"192.168.1.20": true} // README: a P2 private-class hostname
	contexts := regexp.MustCompile(`"ip": ?"([^"]+)"|myip=([0-9a-fA-F.:]+)|[^a-z]ip=([0-9a-fA-F.:]+)|IP address set to ([0-9a-fA-F.:]+)|` +
		`(?:serve|see) \[([0-9a-fA-F.:]+)\]|"ipv[46]hint": ?\["([^"]+)"`)
	seen := 0
	for name, doc := range docs {
		for _, m := range contexts.FindAllStringSubmatch(string(doc), -1) {
			for _, v := range m[1:] {
				if v == "" {
					continue
				}
				a, err := addrclass.Parse(v)
				if err != nil {
					continue // a placeholder such as <ip>
				}
				seen++
				if addrclass.Of(a) != addrclass.Public && !private[v] {
					t.Errorf("%s gives %s as a hostname's address; the service treats it as %s", name, v, addrclass.Of(a))
				}
			}
		}
	}
	if seen < 5 {
		t.Errorf("only %d example addresses found: the patterns no longer match the documents", seen)
	}
}
