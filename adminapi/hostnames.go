package adminapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/diagnose"
	"github.com/hostmint/hostmint/hostnames"
)

type createRequest struct {
	IP          *string `json:"ip"`
	Label       *string `json:"label"`
	Subdomain   *string `json:"subdomain"`
	Domain      *string `json:"domain"`
	Certificate *string `json:"certificate"`
	CA          *string `json:"ca"`
}

func (s *Server) createHostname(c *call) (int, any, error) {
	var req createRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	h, err := s.hostnames.Create(c.r.Context(), c.principal, hostnames.CreateInput{
		IP: req.IP, Label: req.Label, Subdomain: req.Subdomain, Domain: req.Domain, Certificate: req.Certificate, CA: req.CA,
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.hostnameView(h, time.Now()), nil
}

// List limits of the spec.
const (
	defaultLimit = 100
	maxLimit     = 500
)

func (s *Server) listHostnames(c *call) (int, any, error) {
	limit, err := intParam(c.r, "limit", defaultLimit)
	if err != nil {
		return 0, nil, err
	}
	skip, err := intParam(c.r, "skip", 0)
	if err != nil {
		return 0, nil, err
	}
	limit, skip = min(max(limit, 1), maxLimit), max(skip, 0)
	page, err := s.hostnames.List(c.r.Context(), c.principal, limit, skip)
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	views := make([]hostnameView, len(page.Hostnames))
	for i := range page.Hostnames {
		views[i] = s.hostnameView(&page.Hostnames[i], now)
	}
	if !s.cfg.Profile.Teams() {
		return http.StatusOK, listView{Hostnames: views}, nil
	}
	return http.StatusOK, teamListView{Hostnames: views, Total: page.Total, Active: page.Active, Cap: page.Cap, Limit: page.Limit, Skip: page.Skip}, nil
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		// Out of int range is still an integer: clamp it.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			if v[0] == '-' {
				return -1, nil
			}
			return maxLimit + 1, nil
		}
		return 0, apierror.BadRequest("query parameter %s must be an integer, got %q", name, v)
	}
	return n, nil
}

func (s *Server) getHostname(c *call) (int, any, error) {
	h, err := s.hostnames.Get(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

type updateRequest struct {
	IP     *string `json:"ip"`
	Target *string `json:"target"`
}

func (s *Server) updateHostname(c *call) (int, any, error) {
	var req updateRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	h, err := s.hostnames.Update(c.r.Context(), c.principal, c.r.PathValue("id"), hostnames.UpdateInput{IP: req.IP, Target: req.Target})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

func (s *Server) renewHostname(c *call) (int, any, error) {
	h, err := s.hostnames.Renew(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

type releaseView struct {
	Released bool `json:"released"`
}

func (s *Server) releaseHostname(c *call) (int, any, error) {
	if err := s.hostnames.Release(c.r.Context(), c.principal, c.r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, releaseView{Released: true}, nil
}

func (s *Server) teamDomains(c *call) (int, any, error) {
	ds, err := s.hostnames.TeamDomains(c.r.Context(), c.principal)
	if err != nil {
		return 0, nil, err
	}
	out := teamDomainsView{Domains: make([]teamDomainView, len(ds))}
	for i := range ds {
		out.Domains[i] = teamDomainViewOf(&ds[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) teamDomain(c *call) (int, any, error) {
	d, err := s.hostnames.TeamDomain(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, teamDomainViewOf(d), nil
}

// Health is how current a node is, as GET /api/health answers it.
type Health struct {
	Status     string  `json:"status"`
	ReadOnly   bool    `json:"read_only"`
	LagSeconds float64 `json:"lag_seconds"`
	LagChanges int64   `json:"lag_changes"`
}

func (s *Server) health(c *call) (int, any, error) {
	h, err := s.cfg.Health(c.r.Context())
	if err != nil {
		return 0, nil, apierror.Unavailable("not ready: %v", err)
	}
	h.Status = "ok"
	return http.StatusOK, h, nil
}

type diagnosisView struct {
	Hostname  string           `json:"hostname"`
	Summary   string           `json:"summary"`
	Checks    []diagnose.Check `json:"checks"`
	CheckedAt string           `json:"checked_at"`
}

func (s *Server) diagnose(c *call) (int, any, error) {
	r, err := s.diagnoser.Diagnose(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, diagnosisView{Hostname: r.Hostname, Summary: r.Summary, Checks: r.Checks, CheckedAt: ts(r.CheckedAt.UnixMilli())}, nil
}
