package certs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-acme/lego/v4/acme"
	"github.com/go-acme/lego/v4/certcrypto"
	"github.com/go-acme/lego/v4/certificate"
	"github.com/go-acme/lego/v4/challenge/dns01"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Timing of the work.
const (
	lease      = 5 * time.Minute // a node's hold on a certificate while it orders
	retryAfter = time.Minute     // after a failed order
	limitedFor = time.Hour       // how long a CA's rateLimited answer for a domain is remembered
	never      = int64(1) << 62  // DueAt of what needs no more work
)

var (
	errLeaseLost = errors.New("certs: the lease was lost")
	errReleased  = errors.New("certs: the hostname was released")
)

// legoMu serialises orders across every Manager of the process: the
// provider is set per client, but lego keeps its resolver list globally.
var legoMu sync.Mutex

// KeyLabel binds a sealed certificate key to its hostname.
func KeyLabel(hostnameID string) string { return "cert:" + hostnameID }

// Run does the certificate work until ctx ends: orders that are due
// (first issuance, a fresh CSR, managed renewal, retries) and revocations.
func (m *Manager) Run(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		m.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Manager) pass(ctx context.Context) {
	now := time.Now().UnixMilli()
	// An order left "issuing" by a node that died is taken again once its lease runs out.
	cs, err := m.store.Reader().CertificatesDue(ctx, now, 20,
		storage.CertRequested, storage.CertIssuing, storage.CertFailed, storage.CertIssued, storage.CertRevoking)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("listing certificate work failed", "err", err)
		}
		return
	}
	for i := range cs {
		c := &cs[i]
		shown := storage.CertIssuing // what callers see while the order runs
		if c.Status == storage.CertRevoking || c.Status == storage.CertIssued && c.DueAt > now {
			shown = c.Status
		}
		until := now + lease.Milliseconds()
		ok, err := m.store.Reader().LeaseCertificate(ctx, c.HostnameID, c.UpdatedAt, now, until, shown)
		if err != nil || !ok {
			continue // another node has it
		}
		if c.Status == storage.CertRevoking {
			m.revoke(ctx, c)
		} else {
			m.order(ctx, c, until)
		}
	}
}

// order obtains a certificate for c's hostname: from the CA that issued the
// one held (a renewal returns to it), else from the hostname's CA unless it
// recently rate-limited the domain, then the other.
func (m *Manager) order(ctx context.Context, c *storage.Certificate, until int64) {
	q := m.store.Reader()
	h, err := q.Hostname(ctx, c.HostnameID)
	if err != nil {
		m.fail(ctx, c, err)
		return
	}
	switch h.Status {
	case storage.StatusLive:
	case storage.StatusPending, storage.StatusSuspended:
		m.save(ctx, c, func(c *storage.Certificate) { c.DueAt = time.Now().Add(2 * time.Second).UnixMilli() })
		return
	default: // released or terminated: nothing more to do
		m.save(ctx, c, func(c *storage.Certificate) { c.Status, c.DueAt = storage.CertRevoked, never })
		return
	}
	domain := h.Name[strings.IndexByte(h.Name, '.')+1:]
	var tried []string
	for _, ca := range m.caOrder(c, h.CA, domain) {
		tried = append(tried, ca)
		res, key, err := m.obtain(ctx, ca, h, c)
		if isRateLimited(err) {
			m.mu.Lock()
			m.limited[ca+" "+domain] = time.Now().Add(limitedFor)
			m.mu.Unlock()
			m.log.Warn("CA rate-limits the domain; trying the next", "ca", ca, "domain", domain, "err", err)
			continue
		}
		if err != nil {
			m.fail(ctx, c, fmt.Errorf("%s: %w", ca, err))
			return
		}
		m.issued(ctx, c, h, ca, res, key, until)
		return
	}
	m.fail(ctx, c, fmt.Errorf("every CA tried (%s) rate-limits %s right now", strings.Join(tried, ", "), domain))
}

// caOrder is the CAs to try, in turn.
func (m *Manager) caOrder(c *storage.Certificate, preferred, domain string) []string {
	if c.CA != "" && c.Chain != "" {
		return []string{c.CA} // renewals return to the CA that issued
	}
	var first, rest []string
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ca := range m.cfg.CAs {
		limited := time.Now().Before(m.limited[ca.Name+" "+domain])
		switch {
		case ca.Name == preferred && !limited:
			first = append(first, ca.Name)
		case !limited:
			rest = append(rest, ca.Name)
		}
	}
	return append(first, rest...)
}

func isRateLimited(err error) bool {
	var p *acme.ProblemDetails
	if errors.As(err, &p) {
		return p.HTTPStatus == 429 || strings.HasSuffix(p.Type, ":rateLimited")
	}
	return err != nil && strings.Contains(err.Error(), "rateLimited")
}

// obtain places one order at a CA.
func (m *Manager) obtain(ctx context.Context, ca string, h *storage.Hostname, c *storage.Certificate) (*certificate.Resource, *ecdsa.PrivateKey, error) {
	client, err := m.client(ctx, ca)
	if err != nil {
		return nil, nil, err
	}
	legoMu.Lock() // lego's DNS-01 settings are process-wide
	defer legoMu.Unlock()
	if err := client.Challenge.SetDNS01Provider(&provider{m: m, ctx: ctx, hostnameID: h.ID},
		dns01.AddRecursiveNameservers(m.cfg.Nameservers),
		dns01.DisableAuthoritativeNssPropagationRequirement(),
		dns01.WrapPreCheck(func(domain, fqdn, value string, _ dns01.PreCheckFunc) (bool, error) {
			if err := ctx.Err(); err != nil {
				return true, err // shutting down: lego's wait ends at once with this error
			}
			return m.served(fqdn, value), nil
		})); err != nil {
		return nil, nil, err
	}
	if c.CSR != "" {
		csr, err := ParseCSR(c.CSR)
		if err != nil {
			return nil, nil, err
		}
		res, err := client.Certificate.ObtainForCSR(certificate.ObtainForCSRRequest{CSR: csr, Bundle: true})
		return res, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // a fresh key for every issuance
	if err != nil {
		return nil, nil, err
	}
	res, err := client.Certificate.Obtain(certificate.ObtainRequest{Domains: []string{h.Name}, PrivateKey: key, Bundle: true})
	return res, key, err
}

// served reports whether every one of our nameservers answers fqdn's TXT
// with value: the CA's check is then bound to pass.
func (m *Manager) served(fqdn, value string) bool {
	for _, ns := range m.cfg.Nameservers {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(fqdn), dns.TypeTXT)
		r, err := dns.Exchange(q, ns)
		if err != nil {
			return false
		}
		found := false
		for _, rr := range r.Answer {
			if t, ok := rr.(*dns.TXT); ok && strings.Join(t.Txt, "") == value {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// issued stores what an order brought, if this node still holds the lease
// it took (until): an order that outlived it may have been taken over.
func (m *Manager) issued(ctx context.Context, c *storage.Certificate, h *storage.Hostname, ca string, res *certificate.Resource, key *ecdsa.PrivateKey, until int64) {
	renewal := c.Chain != ""
	leaf, err := leafOf(res.Certificate)
	if err != nil {
		m.fail(ctx, c, err)
		return
	}
	var sealed string
	if key != nil {
		if sealed, err = m.cfg.Key.Seal(certcrypto.PEMEncode(key), KeyLabel(h.ID)); err != nil {
			m.fail(ctx, c, err)
			return
		}
	}
	due := never // csr: the caller renews with a fresh CSR
	if key != nil {
		life := leaf.NotAfter.Sub(leaf.NotBefore)
		due = leaf.NotBefore.Add(time.Duration(float64(life) * m.cfg.RenewAt)).UnixMilli()
	}
	err = m.store.WriteVisible(ctx, func(ctx context.Context, tx *storage.Tx) error {
		cur, err := tx.LockHostname(ctx, h.ID)
		if err != nil {
			return err
		}
		if cur.Status == storage.StatusReleased || cur.Status == storage.StatusTerminated {
			return errReleased // the row already queues the old chain's revocation
		}
		held, err := tx.Certificate(ctx, h.ID)
		if err != nil {
			return err
		}
		if held.LeaseUntil != until {
			return errLeaseLost
		}
		c.Status, c.CA, c.Chain, c.KeySealed, c.Error = storage.CertIssued, ca, string(res.Certificate), sealed, ""
		c.ExpiresAt, c.DueAt, c.LeaseUntil, c.UpdatedAt = leaf.NotAfter.UnixMilli(), due, 0, time.Now().UnixMilli()
		if err := tx.SaveCertificate(ctx, c); err != nil {
			return err
		}
		if cur.CA == ca && cur.CertExpiresAt == c.ExpiresAt {
			return nil
		}
		// A new updated_at: background work that read the row before must not write it back.
		cur.CA, cur.CertExpiresAt, cur.UpdatedAt = ca, c.ExpiresAt, max(time.Now().UnixMilli(), cur.UpdatedAt+1)
		if err := tx.UpdateHostname(ctx, cur); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, cur.ID)
	})
	if errors.Is(err, errReleased) {
		// Released while the order ran: the new certificate is revoked at once.
		if client, cerr := m.client(ctx, ca); cerr == nil {
			err = client.Certificate.Revoke(res.Certificate)
		}
		m.log.Info("the hostname was released during its order; the new certificate is revoked", "hostname", h.Name, "err", err)
		return
	}
	if errors.Is(err, errLeaseLost) {
		m.log.Warn("an order outlived its lease; another node's result stands", "hostname", h.Name)
		return
	}
	if err != nil {
		m.log.Error("storing an issued certificate failed", "hostname", h.Name, "err", err)
		return
	}
	m.log.Info("certificate issued", "hostname", h.Name, "ca", ca, "expires", leaf.NotAfter)
	m.observe(true, renewal)
}

func (m *Manager) observe(issued, renewal bool) {
	if m.cfg.Observe != nil {
		m.cfg.Observe(issued, renewal)
	}
}

func (m *Manager) fail(ctx context.Context, c *storage.Certificate, err error) {
	m.log.Warn("certificate order failed; retrying later", "hostname", c.HostnameID, "err", err)
	if ctx.Err() == nil { // an order cut short by a shutdown or reload is not a CA's failure
		m.observe(false, c.Chain != "")
	}
	m.save(ctx, c, func(c *storage.Certificate) {
		if c.Chain == "" || c.Status != storage.CertIssued {
			c.Status = storage.CertFailed
		}
		c.Error, c.DueAt = err.Error(), time.Now().Add(retryAfter).UnixMilli()
	})
}

// save writes c after edit, releasing the lease.
func (m *Manager) save(ctx context.Context, c *storage.Certificate, edit func(*storage.Certificate)) {
	edit(c)
	c.LeaseUntil, c.UpdatedAt = 0, time.Now().UnixMilli()
	if _, err := m.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		return tx.SaveCertificate(ctx, c)
	}); err != nil && ctx.Err() == nil {
		m.log.Error("storing certificate state failed", "hostname", c.HostnameID, "err", err)
	}
}

// revoke revokes a released hostname's certificate at the CA that issued it.
func (m *Manager) revoke(ctx context.Context, c *storage.Certificate) {
	client, err := m.client(ctx, c.CA)
	if err == nil {
		err = client.Certificate.Revoke([]byte(c.Chain))
	}
	if err != nil {
		m.log.Warn("revoking a certificate failed; retrying later", "hostname", c.HostnameID, "ca", c.CA, "err", err)
		m.save(ctx, c, func(c *storage.Certificate) { c.Error, c.DueAt = err.Error(), time.Now().Add(retryAfter).UnixMilli() })
		return
	}
	m.save(ctx, c, func(c *storage.Certificate) { c.Status, c.DueAt, c.Error = storage.CertRevoked, never, "" })
	m.log.Info("certificate revoked", "hostname", c.HostnameID, "ca", c.CA)
}

// provider publishes lego's DNS-01 values the way acme-dns updates do: in
// the store, so that every node serves them.
type provider struct {
	m          *Manager
	ctx        context.Context
	hostnameID string
}

func (p *provider) Present(domain, _, keyAuth string) error {
	value := dns01.GetChallengeInfo(domain, keyAuth).Value
	return p.m.store.WriteVisible(p.ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.AddChallenge(ctx, &storage.Challenge{HostnameID: p.hostnameID, Value: value, CreatedAt: time.Now().UnixMilli()}, records.ChallengeValues); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, p.hostnameID)
	})
}

func (p *provider) CleanUp(string, string, string) error { return nil } // values age out

func (p *provider) Timeout() (time.Duration, time.Duration) {
	return 30 * time.Second, 250 * time.Millisecond
}

func leafOf(chain []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(chain)
	if b == nil {
		return nil, errors.New("certs: the CA's answer holds no certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}
