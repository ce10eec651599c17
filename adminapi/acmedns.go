package adminapi

import (
	"net/http"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
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
		User: c.r.Header.Get("X-Api-User"), Key: c.r.Header.Get("X-Api-Key"), Subdomain: req.Subdomain, TXT: req.TXT,
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"txt": req.TXT}, nil
}

func (s *Server) acmeHealth(*call) (int, any, error) {
	return http.StatusOK, map[string]string{"status": "ok"}, nil
}

func (s *Server) acmeRegister(*call) (int, any, error) {
	return 0, nil, apierror.NotImplemented("this service does not register acme-dns accounts: create a credential with " +
		"POST /api/v1/hostnames/{id}/acme-credential and give your client its username, password and subdomain")
}
