// Package certs runs the certificates the service obtains itself ([P2]
// certificate modes csr and managed): the ACME accounts at the configured
// CAs, orders through lego answered by DNS-01 values published in our own
// store (served by every node), renewal of managed certificates on a fresh
// key, fallback to the second CA when the first rate-limits a domain, and
// revocation on release. Only one node works on a certificate at a time (a
// lease in the store). It knows nothing of HTTP.
package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-acme/lego/v4/certcrypto"
	"github.com/go-acme/lego/v4/lego"
	"github.com/go-acme/lego/v4/registration"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// CA is one configured ACME CA.
type CA struct {
	Name      string // letsencrypt | google
	Directory string
	Root      string // PEM file of a root to trust besides the system's ("" none)
	EABKid    string // external account binding, for CAs that need it
	EABHMAC   string
}

// Config is what the manager needs.
type Config struct {
	CAs         []CA // in order of preference: the first, then the second
	Email       string
	Key         seal.Key // seals private keys; nil: account keys live in memory only
	Nameservers []string // host:port of our own nameservers, where challenges are checked
	// RenewAt is the fraction of a managed certificate's lifetime after
	// which it is renewed (default 2/3).
	RenewAt float64
	// Observe hears how each order ended: issued or not, and whether a
	// certificate was held (a renewal). Nil for none.
	Observe func(issued, renewal bool)
}

// Manager obtains, renews and revokes certificates.
type Manager struct {
	store *storage.Store
	cfg   Config
	log   *slog.Logger

	mu      sync.Mutex
	clients map[string]*lego.Client
	limited map[string]time.Time // CA + " " + domain -> until when the CA refuses orders
}

// New makes a Manager.
func New(store *storage.Store, cfg Config, log *slog.Logger) *Manager {
	if cfg.RenewAt <= 0 || cfg.RenewAt >= 1 {
		cfg.RenewAt = 2.0 / 3
	}
	return &Manager{store: store, cfg: cfg, log: log, clients: map[string]*lego.Client{}, limited: map[string]time.Time{}}
}

// Configured reports whether any CA is configured.
func (m *Manager) Configured() bool { return m != nil && len(m.cfg.CAs) > 0 }

// HasCA reports whether a CA of that name is configured.
func (m *Manager) HasCA(name string) bool {
	_, ok := m.ca(name)
	return ok
}

func (m *Manager) ca(name string) (CA, bool) {
	if m == nil {
		return CA{}, false
	}
	for _, c := range m.cfg.CAs {
		if c.Name == name {
			return c, true
		}
	}
	return CA{}, false
}

// account is the registration.User lego needs.
type account struct {
	email string
	reg   *registration.Resource
	key   crypto.PrivateKey
}

func (a *account) GetEmail() string                        { return a.email }
func (a *account) GetRegistration() *registration.Resource { return a.reg }
func (a *account) GetPrivateKey() crypto.PrivateKey        { return a.key }

// client is the lego client for a CA, with its account: created once per
// CA and kept (sealed) in the store, so every node uses the same account.
func (m *Manager) client(ctx context.Context, name string) (*lego.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.clients[name]; c != nil {
		return c, nil
	}
	ca, ok := m.ca(name)
	if !ok {
		return nil, fmt.Errorf("certs: CA %q is not configured", name)
	}
	httpClient, err := httpClient(ca.Root)
	if err != nil {
		return nil, err
	}
	acct, stored, err := m.loadAccount(ctx, name)
	if err != nil {
		return nil, err
	}
	cfg := lego.NewConfig(acct)
	cfg.CADirURL, cfg.HTTPClient = ca.Directory, httpClient
	cfg.Certificate.KeyType = certcrypto.EC256
	c, err := lego.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", name, err)
	}
	if !stored {
		if ca.EABKid != "" {
			acct.reg, err = c.Registration.RegisterWithExternalAccountBinding(registration.RegisterEABOptions{
				TermsOfServiceAgreed: true, Kid: ca.EABKid, HmacEncoded: ca.EABHMAC})
		} else {
			acct.reg, err = c.Registration.Register(registration.RegisterOptions{TermsOfServiceAgreed: true})
		}
		if err != nil {
			return nil, fmt.Errorf("certs: registering at %s: %w", name, err)
		}
		if err := m.saveAccount(ctx, name, acct); err != nil {
			return nil, err
		}
	}
	m.clients[name] = c
	return c, nil
}

func (m *Manager) loadAccount(ctx context.Context, ca string) (*account, bool, error) {
	a, err := m.store.Reader().ACMEAccount(ctx, ca)
	if err == nil && len(m.cfg.Key) > 0 {
		pemKey, err := m.cfg.Key.Open(a.KeySealed, "acme-account:"+ca)
		if err != nil {
			return nil, false, fmt.Errorf("certs: the account key of %s cannot be opened: %w", ca, err)
		}
		key, err := certcrypto.ParsePEMPrivateKey(pemKey)
		if err != nil {
			return nil, false, err
		}
		reg := new(registration.Resource)
		if err := json.Unmarshal([]byte(a.Registration), reg); err != nil {
			return nil, false, err
		}
		return &account{email: a.Email, reg: reg, key: key}, true, nil
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, err
	}
	return &account{email: m.cfg.Email, key: key}, false, nil
}

// saveAccount keeps the account for every node; without a sealing key it
// stays in this process (and a restart registers anew).
func (m *Manager) saveAccount(ctx context.Context, ca string, a *account) error {
	if len(m.cfg.Key) == 0 {
		m.log.Warn("no cert_encryption_key_file: the ACME account is kept in memory only", "ca", ca)
		return nil
	}
	sealed, err := m.cfg.Key.Seal(certcrypto.PEMEncode(a.key), "acme-account:"+ca)
	if err != nil {
		return err
	}
	reg, _ := json.Marshal(a.reg)
	_, err = m.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		return tx.SaveACMEAccount(ctx, &storage.ACMEAccount{CA: ca, Email: a.email, KeySealed: sealed,
			Registration: string(reg), CreatedAt: time.Now().UnixMilli()})
	})
	return err
}

func httpClient(root string) (*http.Client, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if root != "" {
		b, err := os.ReadFile(root)
		if err != nil {
			return nil, fmt.Errorf("certs: root %s: %w", root, err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("certs: root %s holds no PEM certificate", root)
		}
	}
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: http.ProxyFromEnvironment},
	}, nil
}
