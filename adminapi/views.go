package adminapi

import (
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/domains"

	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/storage"
)

// The JSON shapes of responses. Names are lowercase without a trailing dot,
// times are written by ts.

type hostnameView struct {
	ID          string  `json:"id"`
	Hostname    string  `json:"hostname"`
	IP          string  `json:"ip"`
	RecordType  string  `json:"record_type"`
	Target      *string `json:"target,omitempty"` // [P2], when following one
	Status      string  `json:"status"`
	Certificate string  `json:"certificate,omitempty"` // [P2]
	CA          *string `json:"ca,omitempty"`          // [P2], with managed and csr
	ExpiresAt   string  `json:"expires_at,omitempty"`  // [P1]
	CreatedAt   string  `json:"created_at"`
}

func (s *Server) hostnameView(h *storage.Hostname, now time.Time) hostnameView {
	v := hostnameView{
		ID: h.ID, Hostname: h.Name, IP: h.IP, Status: s.hostnames.Status(h, now), CreatedAt: ts(h.CreatedAt),
	}
	if a, err := addrclass.Parse(h.IP); err == nil {
		v.RecordType = addrclass.RecordType(a)
	}
	if s.cfg.Profile.IdleExpiry() {
		v.ExpiresAt = ts(h.ExpiresAt)
		return v
	}
	v.Certificate = h.Certificate
	if h.Certificate == "csr" && h.CertExpiresAt != 0 {
		v.ExpiresAt = ts(h.CertExpiresAt)
	}
	if h.Target != "" {
		v.Target = &h.Target
	}
	if h.CA != "" {
		v.CA = &h.CA
	}
	return v
}

type listView struct {
	Hostnames []hostnameView `json:"hostnames"`
}

type teamListView struct {
	Hostnames []hostnameView `json:"hostnames"`
	Total     int            `json:"total"`
	Active    int            `json:"active"`
	Cap       int            `json:"cap"`
	Limit     int            `json:"limit"`
	Skip      int            `json:"skip"`
}

// teamDomainView is a domain as a team member sees it.
type teamDomainView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
}

func teamDomainViewOf(d *storage.Domain) teamDomainView {
	return teamDomainView{ID: d.ID, Name: d.Name, Status: d.Status, CreatedAt: ts(d.CreatedAt)}
}

type teamDomainsView struct {
	Domains []teamDomainView `json:"domains"`
}

type accountView struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Plan       string  `json:"plan"`
	Cap        int     `json:"cap"`
	Billing    bool    `json:"billing"`
	Status     string  `json:"status"`
	PlanEndsAt *string `json:"plan_ends_at"`
	ClosedAt   *string `json:"closed_at"`
	CreatedAt  string  `json:"created_at"`
}

func (s *Server) accountView(a *storage.Account) accountView {
	v := accountView{ID: a.ID, Name: a.Name, Plan: a.Plan, Cap: s.hostnames.Cap(a), Billing: a.Billing,
		Status: a.Access(time.Now().UnixMilli()), CreatedAt: ts(a.CreatedAt)}
	if a.PlanEndsAt != 0 {
		e := ts(a.PlanEndsAt)
		v.PlanEndsAt = &e
	}
	if a.ClosedAt != 0 {
		c := ts(a.ClosedAt)
		v.ClosedAt = &c
	}
	return v
}

type keyView struct {
	ID        string         `json:"id"`
	Key       string         `json:"key,omitempty"`
	Name      string         `json:"name"`
	Scopes    []access.Scope `json:"scopes"`
	ExpiresAt *string        `json:"expires_at"`
	CreatedAt string         `json:"created_at"`
}

func keyViewOf(k *storage.APIKey) keyView {
	v := keyView{ID: k.ID, Name: k.Name, Scopes: access.ParseScopes(k.Scopes), CreatedAt: ts(k.CreatedAt)}
	if k.ExpiresAt != 0 {
		e := ts(k.ExpiresAt)
		v.ExpiresAt = &e
	}
	return v
}

type domainView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	AccountID   *string  `json:"account_id"`
	Status      string   `json:"status"`
	CAA         []string `json:"caa"`
	DNSSEC      bool     `json:"dnssec"`
	DS          []string `json:"ds"`
	DSPublished bool     `json:"ds_published"`
	NSEC3       bool     `json:"nsec3"`
	Rollover    *string  `json:"rollover"`
	RolloverAt  *string  `json:"rollover_at"`
	CreatedAt   string   `json:"created_at"`
}

func domainViewOf(d *storage.Domain) domainView {
	v := domainView{ID: d.ID, Name: d.Name, Status: d.Status, CAA: domains.CAA(d), DNSSEC: d.DNSSEC,
		DS: domains.DS(d), DSPublished: d.DSPublished, NSEC3: d.NSEC3, CreatedAt: ts(d.CreatedAt)}
	if d.Rollover != "" {
		at := ts(d.RolloverAt)
		v.Rollover, v.RolloverAt = &d.Rollover, &at
	}
	if v.CAA == nil {
		v.CAA = []string{}
	}
	if d.AccountID != "" {
		id := d.AccountID
		v.AccountID = &id
	}
	return v
}
