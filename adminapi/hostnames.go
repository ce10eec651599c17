package adminapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/problem"
)

type createRequest struct {
	IP    *string `json:"ip"`
	Label *string `json:"label"`
}

func (s *Server) createHostname(c *call) (int, any, error) {
	var req createRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	h, err := s.hostnames.Create(c.r.Context(), c.principal.AccountID, hostnames.CreateInput{IP: req.IP, Label: req.Label})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.hostnameView(h, time.Now()), nil
}

type listView struct {
	Hostnames []hostnameView `json:"hostnames"`
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
	hs, err := s.hostnames.List(c.r.Context(), c.principal.AccountID, limit, skip)
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	out := listView{Hostnames: make([]hostnameView, len(hs))}
	for i := range hs {
		out.Hostnames[i] = s.hostnameView(&hs[i], now)
	}
	return http.StatusOK, out, nil
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
		return 0, problem.BadRequest("query parameter %s must be an integer, got %q", name, v)
	}
	return n, nil
}

func (s *Server) getHostname(c *call) (int, any, error) {
	h, err := s.hostnames.Get(c.r.Context(), c.principal.AccountID, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

type updateRequest struct {
	IP *string `json:"ip"`
}

func (s *Server) updateHostname(c *call) (int, any, error) {
	var req updateRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	h, err := s.hostnames.Update(c.r.Context(), c.principal.AccountID, c.r.PathValue("id"), hostnames.UpdateInput{IP: req.IP})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

func (s *Server) renewHostname(c *call) (int, any, error) {
	h, err := s.hostnames.Renew(c.r.Context(), c.principal.AccountID, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.hostnameView(h, time.Now()), nil
}

type releaseView struct {
	Released bool `json:"released"`
}

func (s *Server) releaseHostname(c *call) (int, any, error) {
	if err := s.hostnames.Release(c.r.Context(), c.principal.AccountID, c.r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, releaseView{Released: true}, nil
}

func (s *Server) health(c *call) (int, any, error) {
	if err := s.cfg.Health(c.r.Context()); err != nil {
		p := problem.Unavailable("not ready: %v", err)
		return 0, nil, p
	}
	return http.StatusOK, map[string]string{"status": "ok"}, nil
}
