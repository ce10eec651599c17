package adminapi

import (
	"net/http"

	"github.com/hostmint/hostmint/storage"
)

type csrRequest struct {
	CSR string `json:"csr"`
}

// certificateView is a hostname's certificate as the service holds it.
type certificateView struct {
	Status      string  `json:"status"`
	CA          string  `json:"ca,omitempty"`
	Certificate string  `json:"certificate,omitempty"`
	PrivateKey  string  `json:"private_key,omitempty"`
	ExpiresAt   *string `json:"expires_at,omitempty"`
	Error       string  `json:"error,omitempty"`
}

func certificateViewOf(c *storage.Certificate, key string) certificateView {
	v := certificateView{Status: c.Status, CA: c.CA, Certificate: c.Chain, PrivateKey: key, Error: c.Error}
	if c.ExpiresAt != 0 {
		e := ts(c.ExpiresAt)
		v.ExpiresAt = &e
	}
	return v
}

func (s *Server) submitCSR(c *call) (int, any, error) {
	var req csrRequest
	if err := decode(c.r, &req); err != nil {
		return 0, nil, err
	}
	cert, err := s.certs.SubmitCSR(c.r.Context(), c.principal, c.r.PathValue("id"), req.CSR)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, certificateViewOf(cert, ""), nil
}

func (s *Server) getCertificate(c *call) (int, any, error) {
	st, err := s.certs.Certificate(c.r.Context(), c.principal, c.r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if st.Row.Chain == "" {
		v := certificateViewOf(st.Row, "")
		return http.StatusConflict, errorWithState{Error: "no certificate yet; the order is " + st.Row.Status, Code: "CONFLICT", State: v}, nil
	}
	return http.StatusOK, certificateViewOf(st.Row, st.PrivateKey), nil
}

// errorWithState is a 409 that also says where the order stands.
type errorWithState struct {
	Error string          `json:"error"`
	Code  string          `json:"code"`
	State certificateView `json:"certificate"`
}
