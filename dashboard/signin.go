package dashboard

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/ratelimit"
)

type signinView struct {
	CSRF string
	Form *form
}

// signinPage is the operator's sign-in form; a signed-in browser goes on.
func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	if sess, _, err := h.current(r); err == nil && sess != nil {
		h.home(w, r)
		return
	}
	h.render(w, http.StatusOK, "signin", layout{Title: "Sign in", Page: signinView{CSRF: h.signinToken(w, r), Form: newForm()}})
}

func (h *Handler) operatorSignin(w http.ResponseWriter, r *http.Request) {
	if h.signinForgery(r) {
		h.status(w, http.StatusForbidden, "Sign-in form expired",
			"The sign-in form was not sent with its security token (cookies may be off). Reload the page and try again.")
		return
	}
	source := r.RemoteAddr
	if h.cfg.Address != nil {
		source = h.cfg.Address(r)
	}
	if left, blocked := h.cfg.Guesses.Blocked(source); blocked {
		e := ratelimit.GuessRefusal(left)
		httperr.Header(w.Header(), e)
		h.status(w, http.StatusTooManyRequests, "Too many wrong tokens", e.Message)
		return
	}
	// Compared in constant time, as the API compares it.
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if h.cfg.AdminToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.AdminToken)) != 1 {
		h.cfg.Guesses.Failed(source)
		f := newForm()
		f.Errors["token"] = "This is not the admin token. It is in the file named by admin_token_file."
		if tok == "" {
			f.Errors["token"] = "Enter the admin token."
		}
		h.log.Warn("dashboard: operator sign-in refused", "remote", r.RemoteAddr)
		h.render(w, http.StatusUnauthorized, "signin", layout{Title: "Sign in", Page: signinView{CSRF: h.signinToken(w, r), Form: f}})
		return
	}
	secret, sess, err := h.accounts.StartOperatorSession(r.Context(), tok)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.log.Info("dashboard: operator signed in", "remote", r.RemoteAddr)
	h.startSession(w, r, secret, sess)
}

type linkView struct {
	CSRF, Token string
	Form        *form
}

// linkPage is what a sign-in link opens: a button that uses it. Opening the
// link does not use it, so a mail scanner or a chat preview that fetches
// the URL cannot spend it before the member does.
func (h *Handler) linkPage(w http.ResponseWriter, r *http.Request) {
	v := linkView{CSRF: h.signinToken(w, r), Token: r.URL.Query().Get("token"), Form: newForm()}
	status := http.StatusOK
	if v.Token == "" {
		v.Form.Errors[""] = "This link has no sign-in token. Open the whole link your operator sent."
		status = http.StatusBadRequest
	}
	h.render(w, status, "link", layout{Title: "Sign in", Page: v})
}

func (h *Handler) redeemLink(w http.ResponseWriter, r *http.Request) {
	if h.signinForgery(r) {
		h.status(w, http.StatusForbidden, "Sign-in form expired",
			"The sign-in form was not sent with its security token (cookies may be off). Open the link again.")
		return
	}
	token := r.PostFormValue("token")
	secret, sess, err := h.accounts.RedeemSigninLink(r.Context(), token)
	if err != nil {
		f := newForm()
		status, ok := f.fail(err, nil)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.render(w, status, "link", layout{Title: "Sign in", Page: linkView{CSRF: h.signinToken(w, r), Form: f}})
		return
	}
	h.log.Info("dashboard: team member signed in", "account", sess.AccountID, "remote", r.RemoteAddr)
	h.startSession(w, r, secret, sess)
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := h.accounts.EndSession(r.Context(), v.secret); err != nil {
		h.failed(w, r, err)
		return
	}
	h.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}
