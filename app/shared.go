package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/seal"
)

// Process-wide resources, shared by every hostname block and by the old and
// new instances that a CoreDNS reload runs side by side for a moment: one
// store (pool, feed, index) per database, one HTTP listener per address.
// Each is reference-counted and closed by the last release.
var (
	sharedMu  sync.Mutex
	nodes     = map[string]*node{}
	listeners = map[string]*listener{}
)

// apiLimits are the API listener's connection limits; exempt are the
// trusted proxies (counted in the total only).
func apiLimits(exempt []netip.Prefix) adminapi.ConnLimits {
	l := adminapi.DefaultConnLimits()
	l.Exempt = exempt
	l.Refused = func(reason string) { apiConnsRefused.WithLabelValues(reason).Inc() }
	return l
}

// listener is one HTTP listener; the newest instance's handler serves it.
type listener struct {
	addr    string
	refs    int
	srv     *http.Server
	handler atomic.Pointer[http.Handler]
	done    chan struct{}
}

func (a *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*a.handler.Load()).ServeHTTP(w, r)
}

func acquireListener(addr string, h http.Handler, limits adminapi.ConnLimits) (*listener, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if a, ok := listeners[addr]; ok {
		a.refs++
		a.handler.Store(&h)
		return a, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api %s: %w", addr, err)
	}
	a := &listener{addr: addr, refs: 1, done: make(chan struct{})}
	a.handler.Store(&h)
	a.srv = &http.Server{
		Handler:           a,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       adminapi.IdleTimeout,
		MaxHeaderBytes:    adminapi.MaxHeaderBytes,
	}
	go func() {
		defer close(a.done)
		// adminapi.Listener: what net/http refuses itself is answered in
		// the API's {error, code} shape too.
		if err := a.srv.Serve(adminapi.Listener(adminapi.LimitConns(ln, limits))); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("hostname: api server stopped", "addr", addr, "err", err)
		}
	}()
	listeners[addr] = a
	return a, nil
}

func (a *listener) release() error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if a.refs--; a.refs > 0 {
		return nil
	}
	delete(listeners, a.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		// Requests still running after the grace period are cut off: a
		// shutdown or reload must not wait on a slow client.
		slog.Warn("hostname: api requests still running at shutdown were closed", "addr", a.addr, "err", err)
		a.srv.Close()
	}
	<-a.done
	return nil
}

// minAdminToken is the shortest admin token taken: 32 characters of a
// random token are too many to guess, however many tries (the written one
// has 43).
const minAdminToken = 32

// adminToken reads the admin token file, or writes a new random token to it
// (mode 0600) when it does not exist.
func adminToken(path string) (string, error) {
	raw := make([]byte, 32)
	rand.Read(raw)
	if err := makeSecret(path, base64.RawURLEncoding.EncodeToString(raw)); err != nil {
		return "", fmt.Errorf("admin_token_file: %w", err)
	}
	if err := seal.CheckPrivate(path); err != nil {
		return "", fmt.Errorf("admin_token_file: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin_token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minAdminToken {
		return "", fmt.Errorf("admin_token_file %s: the token must be at least %d characters (this one has %d); "+
			"delete the file to have a random one written", path, minAdminToken, len(tok))
	}
	return tok, nil
}

// certKey reads the encryption key file, if configured. A writer whose file
// does not exist yet writes a new random key there first, as it does the
// admin token, so that DNSSEC, managed certificates and TSIG keys work from
// the first start. A read-only node never makes one: what it opens was
// sealed with the writers' key, which it must be given.
func certKey(path string, readOnly bool) (seal.Key, error) {
	if path == "" {
		return nil, nil
	}
	if !readOnly {
		raw := make([]byte, 32)
		rand.Read(raw)
		if err := makeSecret(path, base64.StdEncoding.EncodeToString(raw)); err != nil {
			return nil, fmt.Errorf("cert_encryption_key_file: %w", err)
		}
	}
	k, err := seal.LoadKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cert_encryption_key_file %s does not exist: a read-only node opens keys with the writers' key, copy it here", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cert_encryption_key_file: %w", err)
	}
	return k, nil
}

// makeSecret writes value to a new file at path (mode 0600, its directory
// made), unless one is there already: another node of the same directory
// writing it first is fine, its value is the one kept.
func makeSecret(path, value string) error {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable: the read after says why)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
