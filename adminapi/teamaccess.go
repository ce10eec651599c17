package adminapi

import "net/http"

// The operator's view of who can open a team's dashboard: its signed-in
// browsers and the sign-in links not used yet, each of which can be ended.

type sessionView struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
}

type teamAccessView struct {
	Sessions    []sessionView    `json:"sessions"`
	SigninLinks []signinLinkView `json:"signin_links"`
}

func (s *Server) teamAccess(c *call) (int, any, error) {
	a, err := s.accounts.TeamAccess(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	v := teamAccessView{Sessions: []sessionView{}, SigninLinks: []signinLinkView{}}
	for _, x := range a.Sessions {
		v.Sessions = append(v.Sessions, sessionView{ID: x.ID, CreatedAt: ts(x.CreatedAt), ExpiresAt: ts(x.ExpiresAt)})
	}
	for _, x := range a.SigninLinks {
		v.SigninLinks = append(v.SigninLinks, signinLinkView{ID: x.ID, CreatedAt: ts(x.CreatedAt), ExpiresAt: ts(x.ExpiresAt)})
	}
	return http.StatusOK, v, nil
}

func (s *Server) endTeamAccess(c *call) (int, any, error) {
	e, err := s.accounts.EndTeamAccess(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, e, nil
}

func (s *Server) endTeamSession(c *call) (int, any, error) {
	if err := s.accounts.EndTeamSession(c.r.Context(), c.r.PathValue("id"), c.r.PathValue("session_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"ended": true}, nil
}

func (s *Server) endSigninLink(c *call) (int, any, error) {
	if err := s.accounts.EndSigninLink(c.r.Context(), c.r.PathValue("id"), c.r.PathValue("link_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"ended": true}, nil
}
