package adminapi

import (
	"net/http"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/storage"
)

// TSIG keys: an account's credentials for DNS UPDATE, issued by the
// operator or by a team's bearer key within its own scopes and reach.

type tsigRequest struct {
	Name      string         `json:"name"`
	Scopes    []access.Scope `json:"scopes"`
	Algorithm string         `json:"algorithm"`
}

type tsigView struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	KeyName   string         `json:"key_name"`
	Algorithm string         `json:"algorithm"`
	Secret    string         `json:"secret,omitempty"`
	Scopes    []access.Scope `json:"scopes"`
	ExpiresAt *string        `json:"expires_at"`
	CreatedAt string         `json:"created_at"`
}

func tsigViewOf(k *storage.TSIGKey) tsigView {
	v := tsigView{ID: k.ID, Name: k.Name, KeyName: k.KeyName, Algorithm: k.Algorithm,
		Scopes: access.ParseScopes(k.Scopes), CreatedAt: ts(k.CreatedAt)}
	if k.ExpiresAt != 0 {
		e := ts(k.ExpiresAt)
		v.ExpiresAt = &e
	}
	return v
}

type tsigListView struct {
	Keys []tsigView `json:"tsig_keys"`
}

func (s *Server) createTSIGKey(c *call) (int, any, error) {
	var req tsigRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	account := c.r.PathValue("id")
	if c.principal != nil {
		account = c.principal.AccountID
	}
	k, err := s.accounts.CreateTSIGKey(c.r.Context(), account, c.principal,
		accounts.TSIGInput{Name: req.Name, Scopes: req.Scopes, Algorithm: req.Algorithm})
	if err != nil {
		return 0, nil, err
	}
	if s.cfg.TSIGServed != nil {
		// The DNS servers of this node take the key before it is handed
		// out, so that the first UPDATE signed with it is verified.
		ctx := c.r.Context()
		c.afterCommit(func() { s.cfg.TSIGServed(ctx, k.Key.KeyName) })
	}
	v := tsigViewOf(k.Key)
	v.Secret = k.Secret
	return http.StatusCreated, v, nil
}

func (s *Server) listTSIGKeys(c *call) (int, any, error) {
	account := c.r.PathValue("id")
	if c.principal != nil {
		account = c.principal.AccountID
	}
	ks, err := s.accounts.TSIGKeys(c.r.Context(), account, c.principal)
	if err != nil {
		return 0, nil, err
	}
	out := tsigListView{Keys: make([]tsigView, len(ks))}
	for i := range ks {
		out.Keys[i] = tsigViewOf(&ks[i])
	}
	return http.StatusOK, out, nil
}

func (s *Server) revokeTSIGKey(c *call) (int, any, error) {
	account := ""
	if c.principal != nil {
		account = c.principal.AccountID
	}
	if err := s.accounts.RevokeTSIGKey(c.r.Context(), account, c.principal, c.r.PathValue("key_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"revoked": true}, nil
}
