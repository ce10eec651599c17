package hostnames

import (
	"context"
	"errors"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/storage"
)

// Certificates run by the service ([P2] csr and managed). The work itself
// (orders, renewals, revocation) is certs.Manager's; here are the rules of
// what a caller may ask and see.

// CertificateState is what a caller sees of a hostname's certificate.
type CertificateState struct {
	Row        *storage.Certificate
	PrivateKey string // managed only, PEM
}

// SubmitCSR takes a csr-mode hostname's certificate request and queues the
// order; the chain held so far stays until the new one is issued.
func (s *Certificates) SubmitCSR(ctx context.Context, p *access.Principal, id, csr string) (*storage.Certificate, error) {
	var c *storage.Certificate
	err := s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.certificateHost(ctx, tx, p, id, CertCSR)
		if err != nil {
			return err
		}
		if h.Status != storage.StatusLive {
			return apierror.Conflict("hostname %s is %s; certificates are ordered for live hostnames", h.Name, h.Status)
		}
		if err := certs.CheckCSR(csr, h.Name); err != nil {
			return err
		}
		c, err = tx.Certificate(ctx, h.ID)
		if errors.Is(err, storage.ErrNotFound) {
			c, err = &storage.Certificate{HostnameID: h.ID}, nil
		}
		if err != nil {
			return err
		}
		if c.LeaseUntil > time.Now().UnixMilli() {
			return apierror.Conflict("an order for %s is in progress; post the next CSR once it is done", h.Name)
		}
		c.Status, c.CSR, c.DueAt, c.Error, c.LeaseUntil, c.UpdatedAt = storage.CertRequested, csr, 0, "", 0, time.Now().UnixMilli()
		return tx.SaveCertificate(ctx, c)
	})
	return c, err
}

// Certificate returns what the service holds for a csr or managed hostname.
func (s *Certificates) Certificate(ctx context.Context, p *access.Principal, id string) (*CertificateState, error) {
	q := s.store.Reader()
	h, err := s.owned(ctx, q, p, id, access.HostnamesRead, access.DNS01Write)
	if err != nil {
		return nil, err
	}
	if h.Certificate != CertCSR && h.Certificate != CertManaged {
		return nil, apierror.NotFound("hostname %s has certificate %q: its key and certificate are the caller's own", h.Name, h.Certificate)
	}
	c, err := q.Certificate(ctx, h.ID)
	if errors.Is(err, storage.ErrNotFound) {
		if h.Certificate == CertCSR {
			return nil, apierror.Conflict("no certificate yet: post a CSR to /api/v1/hostnames/%s/certificate", h.ID)
		}
		return nil, apierror.Conflict("no certificate yet: it is ordered once the hostname is live")
	}
	if err != nil {
		return nil, err
	}
	st := &CertificateState{Row: c}
	if c.Chain == "" {
		return st, nil
	}
	// The private key goes only to a key that may write the hostname; one
	// that may only read it (or publish DNS-01 values) sees the chain.
	mayWrite := p.Allows(access.HostnamesWrite, access.Target{Hostname: h.ID, Name: h.Name, Domain: h.Zone()})
	if c.KeySealed != "" && mayWrite {
		key, err := s.sealKey.Open(c.KeySealed, certs.KeyLabel(h.ID))
		if err != nil {
			s.log.Error("a managed key cannot be opened", "hostname", h.Name, "err", err)
			return nil, apierror.Internal()
		}
		st.PrivateKey = string(key)
	}
	return st, nil
}

// certificateHost reads a hostname for a certificate call: in the mode
// given, and held by the caller's team with dns01:write on it.
func (s *Certificates) certificateHost(ctx context.Context, tx *storage.Tx, p *access.Principal, id, mode string) (*storage.Hostname, error) {
	h, err := s.owned(ctx, tx, p, id, access.DNS01Write)
	if err != nil {
		return nil, err
	}
	if h.Certificate != mode {
		return nil, apierror.Conflict("hostname %s has certificate %q; CSRs are taken for certificate csr", h.Name, h.Certificate)
	}
	if err := refuseState(h); err != nil {
		return nil, err
	}
	return h, nil
}

// requestManaged queues the first order of a managed hostname.
func requestManaged(ctx context.Context, tx *storage.Tx, h *storage.Hostname) error {
	if h.Certificate != CertManaged {
		return nil
	}
	return tx.SaveCertificate(ctx, &storage.Certificate{HostnameID: h.ID, Status: storage.CertRequested, UpdatedAt: time.Now().UnixMilli()})
}
