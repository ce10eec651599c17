// Package adminapi is Hostmint's HTTP API: routing, bearer-key and admin
// authentication, request decoding, the spec's {error, code} model, the
// hostname and admin endpoints, and /openapi.json and /llms-full.txt, which
// are generated from the same route table that registers the handlers.
//
// It turns HTTP into calls on the rules packages and their answers back
// into HTTP; it holds no rules of its own and never touches SQL.
package adminapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/ratelimit"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/idempotency"
)

// MaxBody is the spec's request body cap.
const MaxBody = 4 << 10

// requestTimeout bounds the work of one request.
const requestTimeout = 10 * time.Second

// Config is what the API needs besides the rules.
type Config struct {
	Profile    profile.Profile
	BaseURL    string
	AdminToken string
	// Guesses throttles wrong admin tokens by client address; nil: a
	// throttle of the server's own.
	Guesses *ratelimit.Guesses
	// Health reports how current the node is, and why it is not ready
	// (nil when it is).
	Health func(ctx context.Context) (Health, error)
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// the client's own address is needed (dyndns2 without myip, /myip).
	TrustedProxies []netip.Prefix
	// Audit records writes and refused attempts; nil records nothing.
	Audit *audit.Log
	// Observe hears how every request was answered; nil for none.
	Observe func(Outcome)
	// TSIGServed waits (briefly) until this node's DNS servers verify
	// signatures of the TSIG key named name; nil when they take no UPDATE.
	TSIGServed func(ctx context.Context, name string)
	// Idempotency keeps the answers of creates sent with an
	// Idempotency-Key; nil: the header is not read.
	Idempotency *idempotency.Service
}

// Server serves the API.
type Server struct {
	cfg       Config
	hostnames *hostnames.Service // the lifecycle
	records   *hostnames.Records
	certs     *hostnames.Certificates
	abuse     *hostnames.Abuse
	diagnoser *hostnames.Diagnoser
	accounts  *accounts.Service
	auth      *accounts.Authenticator
	domains   *domains.Service
	log       *slog.Logger
	mux       *http.ServeMux
	routes    []route
	// unrouted, when set, answers every request no route takes (a
	// read-only node's: storage.ErrReadOnly).
	unrouted error
	// acmeGuesses throttles failed acme-dns authentications by client
	// address (acmedns.go).
	acmeGuesses *ratelimit.Guesses
}

// New builds the server and its routes.
func New(cfg Config, h hostnames.Rules, a *accounts.Service, auth *accounts.Authenticator, d *domains.Service, log *slog.Logger) *Server {
	if cfg.Guesses == nil {
		cfg.Guesses = ratelimit.NewGuesses()
	}
	s := &Server{cfg: cfg, hostnames: h.Lifecycle, records: h.Records, certs: h.Certificates, abuse: h.Abuse, diagnoser: h.Diagnoser,
		accounts: a, auth: auth, domains: d, log: log, mux: http.NewServeMux(), acmeGuesses: ratelimit.NewGuesses()}
	// Every route is documented (marked with its profile); only the
	// deployment's profile's routes are served.
	s.routes = s.routeTable()
	for i := range s.routes {
		if r := &s.routes[i]; cfg.Profile.Serves(r.profile) {
			s.mux.Handle(r.method+" "+r.path, s.endpoint(r))
		}
	}
	return s
}

// ServeHTTP answers a request. Unknown paths and methods get the spec's
// error shape too, not the mux's plain text.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r) // sets the path values
		return
	}
	out := &recorder{StatusWriter: httperr.StatusWriter{ResponseWriter: w}}
	defer s.finish(out, time.Now())
	w = out
	if s.unrouted != nil {
		s.writeError(w, r, s.unrouted)
		return
	}
	rec := &discard{header: http.Header{}}
	h.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", rec.header.Get("Allow"))
		s.writeError(w, r, apierror.New(apierror.CodeMethodNotAllowed,
			"method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, rec.header.Get("Allow")))
		return
	}
	s.writeError(w, r, apierror.NotFound("no such endpoint: %s %s", r.Method, r.URL.Path))
}

// discard records what the mux's fallback handler would write.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

// call is what a handler gets: the request and who it acts for.
type call struct {
	r         *http.Request
	principal *access.Principal   // nil on admin and open routes
	w         http.ResponseWriter // for the audit log
	after     []func()            // see afterCommit
}

// afterCommit runs f once the handler's writes are committed, before the
// answer is sent: at once, unless the handler runs inside a transaction
// of the door's (an Idempotency-Key's).
func (c *call) afterCommit(f func()) { c.after = append(c.after, f) }

// committed runs what afterCommit put off.
func (c *call) committed() {
	for _, f := range c.after {
		f()
	}
	c.after = nil
}

// handler answers with a status and a JSON body, or an error.
type handler func(c *call) (int, any, error)

func (s *Server) endpoint(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{StatusWriter: httperr.StatusWriter{ResponseWriter: w}, route: rt}
		defer s.finish(rec, time.Now())
		w = rec
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "route", rt.method+" "+rt.path, "panic", v)
				s.writeError(w, r, apierror.Internal())
			}
		}()
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		}
		// A database that stops answering must not hang callers: past this
		// the request fails with 503.
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		c := &call{r: r}
		switch rt.auth {
		case authKey:
			p, err := s.auth.Authenticate(r.Context(), bearer(r))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			c.principal = p
			if rt.writes() {
				r = s.audit(w, r, "key:"+p.KeyID, p.AccountID, "")
			}
		case authAdmin:
			source := s.ClientAddr(r)
			if left, blocked := s.cfg.Guesses.Blocked(source); blocked {
				s.writeError(w, r, ratelimit.GuessRefusal(left))
				return
			}
			if !s.isAdmin(r) {
				s.cfg.Guesses.Failed(source)
				s.writeError(w, r, apierror.New(apierror.CodeUnauthorized, "Missing or invalid admin token"))
				return
			}
			if rt.writes() {
				account := ""
				if strings.HasPrefix(rt.path, "/api/admin/accounts/{id}") {
					account = r.PathValue("id") // the account acted for
				}
				r = s.audit(w, r, "admin", account, "")
			}
		}
		c.r, c.w = r, w
		if strings.IndexByte(r.URL.Path, 0) >= 0 {
			// %00 in the path: no id holds NUL, and the databases cannot be
			// asked for one (see hasNUL).
			s.writeError(w, r, apierror.NotFound("nothing here: the path holds a NUL character (%%00)"))
			return
		}
		if rt.raw != nil {
			rt.raw(w, r)
			return
		}
		if rt.idempotent() && s.cfg.Idempotency != nil {
			key, present, err := idempotencyKey(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if present {
				s.serveIdempotent(w, c, rt, key)
				return
			}
		}
		status, body, err := rt.handle(c)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		c.committed()
		writeJSON(w, status, body)
	})
}
