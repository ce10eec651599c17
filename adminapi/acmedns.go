package adminapi

import (
	"bytes"
	"io"
	"net/http"
	"net/netip"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/ratelimit"
)

// The acme-dns protocol as its clients (lego, Traefik, certbot's hook,
// acme.sh) speak it: credentials in X-Api-User / X-Api-Key, a JSON body
// whatever the Content-Type, 200 with the value echoed in quotes.

type credentialView struct {
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	Fulldomain string   `json:"fulldomain"`
	Subdomain  string   `json:"subdomain"`
	ServerURL  string   `json:"server_url"`
	AllowFrom  []string `json:"allowfrom"`
}

func (s *Server) createCredential(c *call) (int, any, error) {
	cred, err := s.certs.CreateCredential(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, credentialView{
		Username: cred.Username, Password: cred.Password, Fulldomain: cred.Fulldomain,
		Subdomain: cred.Username, ServerURL: s.cfg.BaseURL + "/api/acme", AllowFrom: []string{},
	}, nil
}

// updateRequest of acme-dns; Go's decoder matches keys case-insensitively,
// so old clients' SubDomain/Txt work too.
type acmeUpdate struct {
	Subdomain string `json:"subdomain"`
	TXT       string `json:"txt"`
}

func (s *Server) acmeUpdate(c *call) (int, any, error) {
	// An address that failed too often is refused before anything is
	// read or checked, the right password included (guessing stops, and
	// costs no bcrypt), and unaudited, as a 401 is.
	from, _ := s.clientAddr(c.r)
	source := guessSource(from)
	if left, blocked := s.acmeGuesses.Blocked(source); blocked {
		return 0, nil, ratelimit.Refuse(apierror.RateLimited(
			"too many failed acme-dns authentications from this address: try again in %d s", httperr.RetrySeconds(left)), left)
	}
	var req acmeUpdate
	// Lenient on fields, as acme-dns is: clients may send more than these two.
	if err := readJSON(c.r, &req, false); err != nil {
		return 0, nil, err
	}
	// Audited from here: the credential is checked before anything else
	// and a 401 is never recorded, so an entry names a real credential.
	user := c.r.Header.Get("X-Api-User")
	c.r = s.audit(c.w, c.r, "acme:"+user, "", "credential:"+user)
	err := s.certs.PublishChallenge(c.r.Context(), hostnames.ChallengeUpdate{
		User: c.r.Header.Get("X-Api-User"), Key: c.r.Header.Get("X-Api-Key"), Subdomain: req.Subdomain, TXT: req.TXT, From: from,
	})
	if p, ok := apierror.As(err); ok && p.Code == apierror.CodeUnauthorized {
		s.acmeGuesses.Failed(source)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"txt": req.TXT}, nil
}

// guessSource is what failed acme-dns authentications are counted by: the
// client's address, an IPv6 /64 as one (a host commonly holds all of one,
// as the connection limit counts it); "" for an address unknown.
func guessSource(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func (s *Server) acmeHealth(*call) (int, any, error) {
	return http.StatusOK, map[string]string{"status": "ok"}, nil
}

// registerRequest of acme-dns: no body, or allowfrom alone.
type registerRequest struct {
	AllowFrom []string `json:"allowfrom"`
}

// registrationView is acme-dns's answer to /register, field for field.
type registrationView struct {
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	Fulldomain string   `json:"fulldomain"`
	Subdomain  string   `json:"subdomain"`
	AllowFrom  []string `json:"allowfrom"`
}

func (s *Server) acmeRegister(c *call) (int, any, error) {
	var req registerRequest
	// No body at all is a registration without allowfrom (lego sends none).
	body, err := io.ReadAll(c.r.Body)
	if err != nil || len(bytes.TrimSpace(body)) > 0 {
		// readJSON words a read error (a body over the limit, a timeout).
		c.r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		if err := readJSON(c.r, &req, false); err != nil {
			return 0, nil, err
		}
	}
	from, _ := s.clientAddr(c.r)
	c.r = s.audit(c.w, c.r, "network:"+hostnames.SourceNetwork(from), "", "")
	r, err := s.certs.Register(c.r.Context(), from, req.AllowFrom)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, registrationView{Username: r.Username, Password: r.Password, Fulldomain: r.Fulldomain,
		Subdomain: r.Subdomain, AllowFrom: r.AllowFrom}, nil
}

// registrationEntry is a registration as the operator lists it.
type registrationEntry struct {
	Username   string   `json:"username"`
	Subdomain  string   `json:"subdomain"`
	Fulldomain string   `json:"fulldomain"`
	AllowFrom  []string `json:"allowfrom"`
	Source     string   `json:"source"`
	CreatedAt  string   `json:"created_at"`
	UsedAt     string   `json:"used_at"`
}

type registrationList struct {
	Registrations []registrationEntry `json:"registrations"`
	NextCursor    *string             `json:"next_cursor"`
}

func (s *Server) listRegistrations(c *call) (int, any, error) {
	limit, err := intParam(c.r, "limit", defaultLimit)
	if err != nil {
		return 0, nil, err
	}
	limit = min(max(limit, 1), maxLimit)
	rs, err := s.certs.Registrations(c.r.Context(), c.r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return 0, nil, err
	}
	out := registrationList{Registrations: make([]registrationEntry, len(rs))}
	for i, r := range rs {
		out.Registrations[i] = registrationEntry{Username: r.Username, Subdomain: r.Subdomain, Fulldomain: r.Fulldomain,
			AllowFrom: r.AllowFrom, Source: r.Source, CreatedAt: ts(r.CreatedAt), UsedAt: ts(r.UsedAt)}
	}
	if len(rs) == limit {
		out.NextCursor = &rs[len(rs)-1].Username
	}
	return http.StatusOK, out, nil
}

func (s *Server) deleteRegistration(c *call) (int, any, error) {
	if err := s.certs.DeleteRegistration(c.r.Context(), c.r.PathValue("username")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
