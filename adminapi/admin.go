package adminapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hostmint/hostmint/storage"

	"github.com/hostmint/hostmint/access"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/domains"
)

type accountRequest struct {
	Name *string `json:"name"`
	Plan *string `json:"plan"`
	// 32 bits, as the column is on PostgreSQL: a larger cap would reach the
	// database and fail there (500) instead of here (400).
	Cap        *int32       `json:"cap"`
	Billing    *bool        `json:"billing"`
	Status     *string      `json:"status"`
	PlanEndsAt optionalTime `json:"plan_ends_at"`
}

// optionalTime is a date-time field that may be sent as null: sent tells
// null (never) from a field left out (no change).
type optionalTime struct {
	sent bool
	t    time.Time
}

func (o *optionalTime) UnmarshalJSON(b []byte) error {
	o.sent = true
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &o.t)
}

func (r accountRequest) input() accounts.Input {
	in := accounts.Input{Name: r.Name, Plan: r.Plan, Billing: r.Billing, Status: r.Status}
	if r.PlanEndsAt.sent {
		in.PlanEnd = &r.PlanEndsAt.t
	}
	if r.Cap != nil {
		c := int(*r.Cap)
		in.Cap = &c
	}
	return in
}

func (s *Server) createAccount(c *call) (int, any, error) {
	var req accountRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	a, err := s.accounts.Create(c.r.Context(), req.input())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.accountView(a), nil
}

func (s *Server) getAccount(c *call) (int, any, error) {
	a, err := s.accounts.Get(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.accountView(a), nil
}

func (s *Server) patchAccount(c *call) (int, any, error) {
	var req accountRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	a, err := s.accounts.Patch(c.r.Context(), c.r.PathValue("id"), req.input())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.accountView(a), nil
}

type keyRequest struct {
	Name      string         `json:"name"`
	Scopes    []access.Scope `json:"scopes"`
	ExpiresAt *time.Time     `json:"expires_at"`
}

func (s *Server) createKey(c *call) (int, any, error) {
	var req keyRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	k, err := s.accounts.CreateKey(c.r.Context(), c.r.PathValue("id"), accounts.KeyInput{Name: req.Name, Scopes: req.Scopes, ExpiresAt: req.ExpiresAt, Operator: true})
	if err != nil {
		return 0, nil, err
	}
	v := keyViewOf(k.Key)
	v.Key = k.Token
	return http.StatusCreated, v, nil
}

type keysView struct {
	Keys []keyView `json:"keys"`
}

func (s *Server) listKeys(c *call) (int, any, error) {
	ks, err := s.accounts.Keys(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	out := keysView{Keys: make([]keyView, len(ks))}
	for i := range ks {
		out.Keys[i] = keyViewOf(&ks[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) revokeKey(c *call) (int, any, error) {
	if err := s.accounts.RevokeKey(c.r.Context(), c.r.PathValue("key_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"revoked": true}, nil
}

type domainRequest struct {
	Name        *string   `json:"name"`
	AccountID   *string   `json:"account_id"`
	Status      *string   `json:"status"`
	CAA         *[]string `json:"caa"`
	DNSSEC      *bool     `json:"dnssec"`
	DSPublished *bool     `json:"ds_published"`
	NSEC3       *bool     `json:"nsec3"`
	Rollover    *string   `json:"rollover"`
}

func (r domainRequest) input() domains.Input {
	return domains.Input{Name: r.Name, AccountID: r.AccountID, Status: r.Status, CAA: r.CAA, DNSSEC: r.DNSSEC, DSPublished: r.DSPublished, NSEC3: r.NSEC3, Rollover: r.Rollover}
}

func (s *Server) createDomain(c *call) (int, any, error) {
	var req domainRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	d, err := s.domains.Create(c.r.Context(), req.input())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, domainViewOf(d), nil
}

type domainsView struct {
	Domains []domainView `json:"domains"`
}

func (s *Server) listDomains(c *call) (int, any, error) {
	ds, err := s.domains.List(c.r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := domainsView{Domains: make([]domainView, len(ds))}
	for i := range ds {
		out.Domains[i] = domainViewOf(&ds[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) patchDomain(c *call) (int, any, error) {
	var req domainRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	d, err := s.domains.Patch(c.r.Context(), c.r.PathValue("id"), req.input())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, domainViewOf(d), nil
}

func (s *Server) suspendHostname(c *call) (int, any, error) {
	return s.abuseAction(c, s.abuse.Suspend)
}

func (s *Server) restoreHostname(c *call) (int, any, error) {
	return s.abuseAction(c, s.abuse.Restore)
}

func (s *Server) terminateHostname(c *call) (int, any, error) {
	return s.abuseAction(c, s.abuse.Terminate)
}

func (s *Server) abuseAction(c *call, action func(context.Context, string) (*storage.Hostname, error)) (int, any, error) {
	h, err := action(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

type signinLinkView struct {
	ID        string `json:"id"`
	URL       string `json:"url,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	ExpiresAt string `json:"expires_at"`
}

func (s *Server) createSigninLink(c *call) (int, any, error) {
	token, exp, err := s.accounts.CreateSigninLink(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, signinLinkView{ID: accounts.SigninLinkID(token), URL: accounts.SigninURL(s.cfg.BaseURL, token), ExpiresAt: ts(exp.UnixMilli())}, nil
}
