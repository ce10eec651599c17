// Package adminapi is Hostmint's HTTP API: routing, bearer-key and admin
// authentication, request decoding, the spec's {error, code} model, the
// hostname and admin endpoints, and /openapi.json and /llms-full.txt, which
// are generated from the same route table that registers the handlers.
//
// It turns HTTP into calls on the rules packages and their answers back
// into HTTP; it holds no rules of its own and never touches SQL.
package adminapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

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
	"github.com/hostmint/hostmint/storage"
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

func (s *Server) isAdmin(r *http.Request) bool {
	token := bearer(r)
	return token != "" && s.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) == 1
}

// bearer is the credential of a request's "Authorization: Bearer ...", ""
// when it has none.
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(authorization(r), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authorization is the request's Authorization, "" (so 401) when it has
// several: the field is a singleton (RFC 9110 11.6.2), and a proxy in front
// may have checked another one than the one we would use.
func authorization(r *http.Request) string {
	if vs := r.Header.Values("Authorization"); len(vs) == 1 {
		return vs[0]
	}
	return ""
}

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// writeError is the one place an error becomes a response.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p, ok := apierror.As(err)
	switch {
	case ok:
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		p = apierror.Unavailable("the database is unavailable; try again shortly")
		p.RetryAfter = 5 * time.Second
	case errors.Is(err, context.Canceled):
		p = apierror.Unavailable("the request was cancelled")
	case errors.Is(err, storage.ErrReadOnly):
		p = apierror.Unavailable("this node is read-only: it serves DNS from a copy of the database and writes nothing; " +
			"send API requests to a writer node")
	default:
		s.log.Error("unexpected error", "method", r.Method, "path", r.URL.Path, "err", err)
		p = apierror.Internal()
	}
	httperr.Header(w.Header(), p)
	noteCode(w, p.Code)
	writeJSON(w, httperr.Status(p.Code), errorBody{Error: p.Message, Code: p.Code})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(encodeJSON(body))
}

// decode reads the JSON object body into v: unknown fields, trailing data,
// wrong types and bodies over MaxBody are all 400 with a message naming the
// problem.
func decode(r *http.Request, v any) error { return readJSON(r, v, true) }

// readJSON reads the whole body (at most MaxBody) and decodes one JSON
// value from it; strict refuses fields v does not have.
func readJSON(r *http.Request, v any, strict bool) error {
	body, err := io.ReadAll(r.Body)
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return apierror.BadRequest("request body is larger than 4KB")
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		// The http.Server's ReadTimeout; the error would name our sockets.
		return apierror.BadRequest("request body was not received in time")
	}
	if err != nil {
		return apierror.BadRequest("request body could not be read: %v", err)
	}
	if !utf8.Valid(body) {
		// JSON is UTF-8 (RFC 8259); the decoder would silently store U+FFFD
		// for what the caller sent.
		return apierror.BadRequest("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return apierror.BadRequest("request body must hold one JSON object and nothing after it")
	}
	if hasNUL(body) {
		return apierror.BadRequest("request body must not hold the character U+0000 (\\u0000)")
	}
	return nil
}

// hasNUL reports whether a string in the JSON body, key or value, holds
// U+0000. No field of the API has a use for it, and neither database takes
// it: bun writes values into the SQL text, where SQLite reads NUL as its
// end, and PostgreSQL refuses it in text.
func hasNUL(body []byte) bool {
	// JSON carries NUL only as this escape (a raw one is a syntax error);
	// tokens tell it from an escaped backslash followed by "u0000".
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

func jsonError(err error) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		timeErr   *time.ParseError
	)
	switch {
	case errors.Is(err, io.EOF):
		return apierror.BadRequest("request body is empty; send a JSON object")
	case errors.As(err, &syntaxErr):
		return apierror.BadRequest("request body is not valid JSON: %v", err)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apierror.BadRequest("request body must be a JSON object")
		}
		if k := typeErr.Type.Kind(); strings.HasPrefix(typeErr.Value, "number") && k >= reflect.Int && k <= reflect.Uint64 {
			// A fraction, or a number too big for the field.
			return apierror.BadRequest("field %s must be an integer of at most %d bits, got %s",
				typeErr.Field, typeErr.Type.Bits(), strings.TrimPrefix(typeErr.Value, "number "))
		}
		return apierror.BadRequest("field %s must be of type %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()))
	case errors.As(err, &timeErr):
		return apierror.BadRequest("a date-time field is not RFC 3339 (2006-01-02T15:04:05Z): %q", timeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return apierror.BadRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return apierror.BadRequest("request body is not valid JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return "number"
}

// ts writes a stored time the way every response does.
func ts(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
