package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apikey"
)

const (
	sessionCookie = "hostmint_session"
	// signinCookie carries a nonce before there is a session; the sign-in
	// forms' CSRF token is its MAC under a server key (signinMAC), so a
	// page elsewhere that tosses a cookie of its own choosing into the
	// browser cannot make a token that goes with it.
	signinCookie = "hostmint_signin"
)

// cookie is how r's browser keeps the cookie named base: over TLS with
// the __Host- prefix (only a secure answer from this very host can set
// it, with Path=/ and no Domain, so a page on a sibling domain cannot
// toss one in), and otherwise under the dashboard's path.
func (h *Handler) cookie(r *http.Request, base string) (name, path string) {
	if h.secureFor(r) {
		return "__Host-" + base, "/"
	}
	return base, Prefix
}

// readCookie is the value of r's cookie named base, as cookie names it.
func (h *Handler) readCookie(r *http.Request, base string) (string, bool) {
	name, _ := h.cookie(r, base)
	c, err := r.Cookie(name)
	if err != nil {
		return "", false
	}
	return c.Value, true
}

// visit is one request of a signed-in browser.
type visit struct {
	sess   *accounts.Session
	secret string // the cookie's session secret
	csrf   string // this session's form token
}

// csrfToken is the form token of a session: derived from its secret, so it
// is per session, needs no storage, and cannot be computed without the
// cookie, which a page elsewhere cannot read.
func csrfToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("hostmint dashboard csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// current is the request's session, if its cookie names a live one.
func (h *Handler) current(r *http.Request) (*accounts.Session, string, error) {
	secret, ok := h.readCookie(r, sessionCookie)
	if !ok {
		return nil, "", accounts.ErrNoSession
	}
	sess, err := h.accounts.Session(r.Context(), secret)
	if err == nil && sess.Operator() && !h.granted(sess) {
		// Started with an admin token that has since been replaced.
		return nil, "", accounts.ErrNoSession
	}
	return sess, secret, err
}

// who may use a page.
type role int

const (
	anyone role = iota
	operatorOnly
	teamOnly
)

// session wraps a page that needs a signed-in browser of role: without a
// session it sends the browser to sign in; with another role's session it
// answers 403; a POST must carry the session's CSRF token (403 otherwise,
// before anything is changed).
func (h *Handler) session(want role, page func(http.ResponseWriter, *http.Request, *visit)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, secret, err := h.current(r)
		if errors.Is(err, accounts.ErrNoSession) {
			h.clearCookie(w, r, sessionCookie)
			http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
			return
		}
		if err != nil {
			h.failed(w, r, err)
			return
		}
		switch {
		case want == operatorOnly && !sess.Operator():
			h.status(w, http.StatusForbidden, "Operator only", "This page is the operator's; you are signed in as a team member.")
			return
		case want == teamOnly && sess.Operator():
			h.status(w, http.StatusForbidden, "Team members only",
				"This page is a team's; you are signed in as the operator. Issue a sign-in link for the team instead.")
			return
		}
		v := &visit{sess: sess, secret: secret, csrf: csrfToken(secret)}
		if r.Method == http.MethodPost && !sameToken(r.PostFormValue("csrf"), v.csrf) {
			h.status(w, http.StatusForbidden, "Form expired",
				"The form was not sent with this session's security token. Reload the page and try again.")
			return
		}
		if r.Method == http.MethodPost {
			h.audited(w, r, v, page)
			return
		}
		page(w, r, v)
	}
}

// startSession sets the cookie of a new session and sends the browser on.
// A session the browser held before (the operator opening a member's link)
// is ended rather than left to expire unseen.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, secret string, sess *accounts.Session) {
	if old, ok := h.readCookie(r, sessionCookie); ok && old != "" {
		if err := h.accounts.EndSession(r.Context(), old); err != nil {
			h.log.Warn("dashboard: ending the session replaced by a new sign-in", "err", err)
		}
	}
	name, path := h.cookie(r, sessionCookie)
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: secret, Path: path, Expires: sess.ExpiresAt,
		MaxAge: int(time.Until(sess.ExpiresAt).Seconds()), HttpOnly: true, Secure: h.secureFor(r), SameSite: http.SameSiteStrictMode,
	})
	h.clearCookie(w, r, signinCookie)
	next := Prefix + "team"
	if sess.Operator() {
		next = Prefix + "operator"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// secureFor reports whether r's cookies are marked Secure: an https
// BaseURL, or a request that came over TLS (through a trusted proxy).
func (h *Handler) secureFor(r *http.Request) bool {
	return h.secure || h.cfg.TLS != nil && h.cfg.TLS(r)
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request, base string) {
	name, path := h.cookie(r, base)
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, Secure: h.secureFor(r), SameSite: http.SameSiteStrictMode})
}

// signinToken is the sign-in forms' CSRF token: the MAC of the browser's
// signin nonce, which is set now if it has none.
func (h *Handler) signinToken(w http.ResponseWriter, r *http.Request) string {
	if nonce, ok := h.readCookie(r, signinCookie); ok && len(nonce) >= 32 {
		return h.signinMAC(nonce)
	}
	nonce := apikey.Random(32)
	name, path := h.cookie(r, signinCookie)
	http.SetCookie(w, &http.Cookie{Name: name, Value: nonce, Path: path, MaxAge: int(time.Hour.Seconds()),
		HttpOnly: true, Secure: h.secureFor(r), SameSite: http.SameSiteStrictMode})
	return h.signinMAC(nonce)
}

// signinMAC is the sign-in token of nonce under a key derived from the
// admin token, which every node shares and no page elsewhere knows.
func (h *Handler) signinMAC(nonce string) string {
	key := sha256.Sum256([]byte("hostmint dashboard sign-in\x00" + h.cfg.AdminToken))
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signinForgery reports whether a sign-in post lacks the token of its
// browser's nonce, or a browser says it came from another origin. A pair
// of nonce and token is anyone's who fetched the form, and a page on a
// sibling host (same site, so SameSite lets its cookies through) could
// toss one in over plain http: the browser's Sec-Fetch-Site (every
// current browser sends it) is what tells it apart from the dashboard's
// own form.
func (h *Handler) signinForgery(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	nonce, ok := h.readCookie(r, signinCookie)
	return !ok || len(nonce) < 32 || !sameToken(r.PostFormValue("csrf"), h.signinMAC(nonce))
}

// granted reports whether an operator session was started with this
// dashboard's admin token, deriving the key once per session and process.
func (h *Handler) granted(sess *accounts.Session) bool {
	key := sess.Grant()
	if ok, seen := h.grants.Load(key); seen {
		return ok.(bool)
	}
	ok := sess.Granted(h.cfg.AdminToken)
	h.grants.Store(key, ok)
	return ok
}
