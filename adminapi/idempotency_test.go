package adminapi

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/access"
)

// secretWords are the parts of a field name that suggest a secret; the
// test's own list, wider than secretNames, so that a field the rule would
// miss is caught here.
var secretWords = []string{"password", "passphrase", "secret", "key", "token", "private", "credential"}

// secretPhrases in a field's description say it is shown once.
var secretPhrases = []string{"shown only", "only in the create answer", "only in this answer", "token="}

// notSecret are fields whose names or words look secret and are not,
// each with why.
var notSecret = map[string]string{
	"TSIGKey.key_name": "the name the TSIG record carries, in clear on the wire",
}

// looksSecret reports whether a field, by its name or description, holds
// a secret shown once.
func looksSecret(name string, sc schema) bool {
	for _, part := range strings.Split(name, "_") {
		if slices.Contains(secretWords, part) {
			return true
		}
	}
	desc, _ := sc["description"].(string)
	for _, p := range secretPhrases {
		if strings.Contains(strings.ToLower(desc), p) {
			return true
		}
	}
	return false
}

// suspects are the fields of sc, and of what it holds or refers to, that
// look secret and are not listed in notSecret, as Schema.field.
func suspects(all map[string]schema, owner string, sc schema, seen map[string]bool) []string {
	if r, ok := sc["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		if seen[name] {
			return nil
		}
		seen[name] = true
		return suspects(all, name, all[name], seen)
	}
	var out []string
	if items, ok := sc["items"].(schema); ok {
		out = append(out, suspects(all, owner, items, seen)...)
	}
	props, _ := sc["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(schema)
		if looksSecret(name, ps) && notSecret[owner+"."+name] == "" {
			out = append(out, owner+"."+name)
		}
		out = append(out, suspects(all, owner, ps, seen)...)
	}
	return out
}

// Every create that takes an Idempotency-Key and answers a secret keeps
// its answer sealed: whether it does is read from its answer's schema, so
// a new secret-bearing answer cannot be left out of a list.
func TestIdempotentSecretAnswers(t *testing.T) {
	t.Parallel()
	s := &Server{}
	all := s.schemas()
	secretRoutes := 0
	for _, rt := range s.routeTable() {
		if !rt.idempotent() {
			continue
		}
		if rt.okSchema == "" || all[rt.okSchema] == nil {
			t.Errorf("%s %s: takes an Idempotency-Key but answers no schema", rt.method, rt.path)
			continue
		}
		found := suspects(all, rt.okSchema, ref(rt.okSchema), map[string]bool{})
		if len(found) > 0 {
			secretRoutes++
		}
		if len(found) > 0 && !rt.secretAnswer() {
			t.Errorf("%s %s answers %v, which hold a secret, and is not kept sealed", rt.method, rt.path, found)
		}
	}
	// The answers known to hold a secret today; the walk above is what
	// catches tomorrow's.
	for _, name := range []string{"Key", "TSIGKey", "Credential", "SigninLink", "Registration", "CertificateState"} {
		if !secretAnswers()[name] {
			t.Errorf("%s holds a secret and is not treated as one", name)
		}
	}
	for _, name := range []string{"Hostname", "Record", "Account", "Domain"} {
		if secretAnswers()[name] {
			t.Errorf("%s holds no secret and is treated as one (its retry without an encryption key would be 409)", name)
		}
	}
	if secretRoutes < 5 {
		t.Errorf("%d idempotent routes answer a secret, want at least 5: the walk finds nothing", secretRoutes)
	}
}

// Every field that looks secret is marked, or named as secretNames
// names them, so holdsSecret sees it wherever it is answered.
func TestSecretFieldsMarked(t *testing.T) {
	t.Parallel()
	all := (&Server{}).schemas()
	for name, sc := range all {
		props, _ := sc["properties"].(map[string]any)
		for field, p := range props {
			ps, _ := p.(schema)
			if !looksSecret(field, ps) || notSecret[name+"."+field] != "" {
				continue
			}
			if ps[secretMark] != true && !secretNames[field] {
				t.Errorf("%s.%s looks secret and is neither marked secret(...) nor named as secretNames names secrets", name, field)
			}
		}
	}
}

// A kept answer's scope is the credential that authenticated the
// request, never a default: a route without a credential takes no key,
// and a request that no credential authenticated reaches no scope.
func TestIdempotencyScope(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef"
	s := &Server{cfg: Config{AdminToken: token}}
	routes := s.routeTable()
	for _, rt := range routes {
		if rt.auth == authNone && rt.idempotent() {
			t.Errorf("%s %s takes no credential and an Idempotency-Key", rt.method, rt.path)
		}
	}
	i := slices.IndexFunc(routes, func(rt route) bool { return rt.path == acmeRegisterPath })
	if i < 0 || routes[i].idempotent() {
		t.Fatalf("POST %s: missing or takes an Idempotency-Key", acmeRegisterPath)
	}

	withToken := func(tok string) *call {
		r := httptest.NewRequest("POST", "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return &call{r: r}
	}
	key := withToken("svc_k1_x")
	key.principal = &access.Principal{AccountID: "a1", KeyID: "k1"}
	for _, tc := range []struct {
		name   string
		auth   authKind
		c      *call
		want   string
		wantOK bool
	}{
		{"admin token", authAdmin, withToken(token), "admin", true},
		{"API key", authKey, key, "key:k1", true},
		{"anonymous on an open route", authNone, withToken(""), "", false},
		{"the admin token on an open route", authNone, withToken(token), "", false},
		{"an admin route not authenticated", authAdmin, withToken("wrong"), "", false},
		{"a key route with no principal", authKey, withToken(token), "", false},
		{"a key route's principal without a key", authKey, &call{r: key.r, principal: &access.Principal{AccountID: "a1"}}, "", false},
	} {
		rt := &route{method: "POST", ok: 201, auth: tc.auth}
		if got, ok := s.idempotencyScope(rt, tc.c); got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: scope %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

// BenchmarkIdempotencyScope is what a create carrying a key pays for its
// scope and its secret rule: the admin token's compare and a map lookup.
func BenchmarkIdempotencyScope(b *testing.B) {
	const token = "0123456789abcdef0123456789abcdef"
	s := &Server{cfg: Config{AdminToken: token}}
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	c := &call{r: r}
	rt := &route{method: "POST", ok: 201, auth: authAdmin, okSchema: "Key"}
	for b.Loop() {
		if _, ok := s.idempotencyScope(rt, c); !ok || !rt.secretAnswer() {
			b.Fatal("no scope")
		}
	}
}
