package adminapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Placeholders in FuzzACMEUpdate's inputs for the credential of the server
// asked: the real username and password are random per server, and a seed
// must still get past authentication to the value checks behind it.
const (
	userMark = "$USER"
	passMark = "$PASS"
)

// acmeValue is a well-formed challenge value: 43 of A-Z a-z 0-9 _ -.
var acmeValue = "0123456789_abcdefghijklmnopqrstuvwxyz-ABCDE"

var acmeSeeds = []struct{ user, key, body string }{
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `"}`},
	{userMark, passMark, `{"SubDomain":"` + userMark + `","Txt":"` + acmeValue + `","extra":[1,2]}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue[:42] + `"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue[:42] + `="}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `x"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `\n"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue[:42] + `\u0000"}`},
	{userMark, passMark, `{"subdomain":"someone-else","txt":"` + acmeValue + `"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `\u0000","txt":"` + acmeValue + `"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `"}`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":null}`},
	{userMark, passMark, `{"subdomain":1,"txt":2}`},
	{userMark, passMark, ``},
	{userMark, passMark, `[]`},
	{userMark, passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `"} {}`},
	{userMark, passMark, `{"txt":"` + strings.Repeat("a", 5000) + `"}`},
	{userMark, passMark + "x", `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `"}`},
	{userMark, " " + passMark + " ", `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `"}`},
	{strings.ToUpper(userMark), passMark, `{"subdomain":"` + userMark + `","txt":"` + acmeValue + `"}`},
	{"", "", `{"subdomain":"","txt":"` + acmeValue + `"}`},
	{"not-a-user", "not-a-key", `{"subdomain":"not-a-user","txt":"` + acmeValue + `"}`},
	{"\xff\xfe", "\xff", `{"subdomain":"\xff","txt":"` + acmeValue + `"}`},
	{"' OR 1=1 --", "%", `{"subdomain":"' OR 1=1 --","txt":"` + acmeValue + `"}`},
}

// FuzzACMEUpdate fuzzes acme-dns's POST /api/acme/update: the X-Api-User and
// X-Api-Key headers and the {subdomain, txt} body, on each dialect and
// profile. The contract is the other routes' (never a 5xx, errors as
// {error, code}), and a 200 only for the credential's own username and
// password, echoing the value.
func FuzzACMEUpdate(f *testing.F) {
	for _, s := range acmeSeeds {
		f.Add(s.user, s.key, []byte(s.body))
	}
	apis := newFuzzAPIs(f)
	update := bodyRoute{method: "POST", path: "/api/acme/update"}
	f.Fuzz(func(t *testing.T, user, key string, body []byte) {
		for _, a := range apis {
			u := strings.ReplaceAll(user, userMark, a.user)
			k := strings.ReplaceAll(key, passMark, a.pass)
			if !headerValue(u) || !headerValue(k) {
				continue // net/http refuses the request before any handler runs
			}
			// As net/http's header parsing hands them on.
			u, k = strings.Trim(u, " \t"), strings.Trim(k, " \t")
			b := bytes.ReplaceAll(body, []byte(userMark), []byte(a.user))
			a.log.Reset()
			status, h, resp := a.do(update.method, update.path, http.Header{"X-Api-User": {u}, "X-Api-Key": {k}}, b)
			req := "X-Api-User: " + u + "\nX-Api-Key: " + k + "\n\n" + string(b)
			a.check(t, *a.route(update), req, status, h, resp)
			if status != http.StatusOK {
				continue
			}
			if u != a.user || k != a.pass {
				t.Fatalf("%s: 200 for a credential that is not the server's\n%s", a.name, req)
			}
			var echo struct{ TXT string }
			var sent acmeUpdate
			json.Unmarshal(resp, &echo)
			json.Unmarshal(b, &sent)
			if echo.TXT != sent.TXT || len(echo.TXT) != 43 {
				t.Fatalf("%s: 200 %s for\n%s", a.name, resp, req)
			}
		}
	})
}

// The seeds get past authentication: without that, the fuzzer would only
// ever see 401s.
func TestFuzzACMESeedsAuthenticate(t *testing.T) {
	t.Parallel()
	for _, a := range newFuzzAPIs(t) {
		s := acmeSeeds[0]
		body := strings.ReplaceAll(s.body, userMark, a.user)
		h := http.Header{"X-Api-User": {strings.ReplaceAll(s.user, userMark, a.user)},
			"X-Api-Key": {strings.ReplaceAll(s.key, passMark, a.pass)}}
		if status, _, resp := a.do("POST", "/api/acme/update", h, []byte(body)); status != http.StatusOK {
			t.Errorf("%s: %s = %d %s\n%s", a.name, body, status, resp, a.log)
		}
	}
}

// headerValue reports whether net/http's server takes v as a header value:
// no control characters but tab.
func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
