package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/idempotency"
)

// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) on the
// POSTs that create (those answering 201) behind a credential: a retry
// with the same key and request within 24 hours answers the first answer
// and writes nothing. A key is its credential's own; a route that takes
// no credential takes no key, since there a key would be anyone's.

// idempotencyDoc is the header's description in /openapi.json.
const idempotencyDoc = "Makes the create safe to retry (after a timeout, a broken connection or a 503): a retry with the same key, " +
	"method, path and body within 24 hours answers the first answer (header `Idempotent-Replayed: true`) and writes nothing; " +
	"the same key with another request is 409 CONFLICT. A create that failed keeps nothing: its retry runs again. " +
	"Keys are the credential's own (an API key's, or the admin token's): another credential's requests never see them, and routes " +
	"that take no credential (POST /api/acme/register) ignore the header. 1 to 255 visible ASCII characters; a random UUID per create is usual. " +
	"An answer holding a secret (a key, a password) is kept sealed with the encryption key; without `cert_encryption_key_file` " +
	"its retry answers 409 instead of repeating the secret."

// errorStatuses are rt's error statuses, with the header's 400 and 409.
func (rt *route) errorStatuses() []int {
	out := slices.Clone(rt.errors)
	if rt.idempotent() {
		for _, st := range []int{http.StatusBadRequest, http.StatusConflict} {
			if !slices.Contains(out, st) {
				out = append(out, st)
			}
		}
		slices.Sort(out)
	}
	return out
}

// idempotent reports whether rt takes an Idempotency-Key: a create
// behind a credential, whose kept answers are that credential's alone.
func (rt *route) idempotent() bool {
	return rt.method == http.MethodPost && rt.ok == http.StatusCreated && rt.handle != nil && rt.auth != authNone
}

// idempotencyScope is whose kept answers c reaches: the credential that
// authenticated it (the key the door found, or the admin token, checked
// again here), never a default. ok is false for a request that no
// credential authenticated: an open route's, whatever it sent.
func (s *Server) idempotencyScope(rt *route, c *call) (scope string, ok bool) {
	switch rt.auth {
	case authKey:
		if c.principal != nil && c.principal.KeyID != "" {
			return "key:" + c.principal.KeyID, true
		}
	case authAdmin:
		if c.principal == nil && s.isAdmin(c.r) {
			return "admin", true
		}
	}
	return "", false
}

// secretAnswer reports whether rt's answer holds a secret shown once.
func (rt *route) secretAnswer() bool { return secretAnswers()[rt.okSchema] }

// secretAnswers are the schemas whose answers hold a secret, read from
// the schemas themselves (see holdsSecret), so that a new answer with a
// secret is kept sealed without being listed anywhere.
var secretAnswers = sync.OnceValue(func() map[string]bool {
	all := (&Server{}).schemas()
	out := map[string]bool{}
	for name := range all {
		out[name] = holdsSecret(all, all[name], map[string]bool{})
	}
	return out
})

// secretNames are the field names that hold a secret whether marked or
// not: an unmarked new field so named is still kept sealed.
var secretNames = map[string]bool{"password": true, "secret": true, "key": true, "token": true, "private_key": true}

// holdsSecret reports whether sc, or a schema it holds or refers to, has
// a field marked secret (see secret in schemas.go) or named as one.
func holdsSecret(all map[string]schema, sc schema, seen map[string]bool) bool {
	if sc == nil {
		return false
	}
	if sc[secretMark] == true {
		return true
	}
	if r, ok := sc["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		if seen[name] {
			return false
		}
		seen[name] = true
		return holdsSecret(all, all[name], seen)
	}
	if items, ok := sc["items"].(schema); ok && holdsSecret(all, items, seen) {
		return true
	}
	props, _ := sc["properties"].(map[string]any)
	for name, p := range props {
		if secretNames[name] {
			return true
		}
		if ps, ok := p.(schema); ok && holdsSecret(all, ps, seen) {
			return true
		}
	}
	return false
}

// idempotencyKey is the request's Idempotency-Key: present is false when
// it has none; a field sent empty or several times is an error.
func idempotencyKey(r *http.Request) (key string, present bool, err error) {
	switch vs := r.Header.Values("Idempotency-Key"); len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, idempotency.Check(vs[0])
	}
	return "", true, apierror.BadRequest("send one Idempotency-Key, not several")
}

// serveIdempotent answers c on rt through the kept answer of key.
func (s *Server) serveIdempotent(w http.ResponseWriter, c *call, rt *route, key string) {
	// A key is the credential's own: another key of the same team, with
	// other scopes, does not get this one's answers (its secrets least of
	// all), and a request no credential authenticated reaches none.
	scope, ok := s.idempotencyScope(rt, c)
	if !ok {
		s.serveOnce(w, c, rt)
		return
	}
	r := c.r
	// The request is read once: its bytes are what a retry must repeat,
	// and the handler reads them again (with the error reading stopped at).
	raw, readErr := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), errReader{readErr}))
	req := idempotency.Request{Scope: scope, Key: key, Secret: rt.secretAnswer(),
		Request: append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), raw...)}
	ans, err := s.cfg.Idempotency.Do(r.Context(), req, func(ctx context.Context) (idempotency.Answer, error) {
		c.r = r.WithContext(ctx) // its writes join the kept answer's transaction
		c.after = nil            // a retried transaction's attempts each put off their own
		status, body, err := rt.handle(c)
		if err != nil {
			return idempotency.Answer{}, err
		}
		return idempotency.Answer{Status: status, Body: encodeJSON(body)}, nil
	})
	c.r = r
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ans.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	} else {
		c.committed()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(ans.Status)
	w.Write(ans.Body)
}

// serveOnce answers c as if it carried no key: nothing kept, nothing
// replayed.
func (s *Server) serveOnce(w http.ResponseWriter, c *call, rt *route) {
	status, body, err := rt.handle(c)
	if err != nil {
		s.writeError(w, c.r, err)
		return
	}
	c.committed()
	writeJSON(w, status, body)
}

// errReader is the error a body's read ended with, after its bytes.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// encodeJSON is body as writeJSON sends it.
func encodeJSON(body any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(body)
	return b.Bytes()
}
