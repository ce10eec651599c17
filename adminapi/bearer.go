package adminapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// A request's credential: a key or the admin token, as a bearer token.

func (s *Server) isAdmin(r *http.Request) bool {
	token := bearer(r)
	return token != "" && s.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) == 1
}

// bearer is the credential of a request's "Authorization: Bearer ...", ""
// when it has none.
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(authorization(r), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authorization is the request's Authorization, "" (so 401) when it has
// several: the field is a singleton (RFC 9110 11.6.2), and a proxy in front
// may have checked another one than the one we would use.
func authorization(r *http.Request) string {
	if vs := r.Header.Values("Authorization"); len(vs) == 1 {
		return vs[0]
	}
	return ""
}
