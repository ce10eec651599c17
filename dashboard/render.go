package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var embedded embed.FS

var staticFS, _ = fs.Sub(embedded, "static")

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"ms": func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms)
	},
	"accountTerms": func(id string, f *form, plans []string, p profile.Profile, capHint string) accountTerms {
		return accountTerms{ID: id, Form: f, Plans: plans, Profile: p, CapHint: capHint}
	},
	"percent": func(n, of int) int {
		if of <= 0 {
			return 100
		}
		return min(100, n*100/of)
	},
}

// accountTerms fills the "account-terms" fields of the account forms (the
// operator's new account, and an account's page).
type accountTerms struct {
	ID      string // the prefix of the element ids
	Form    *form
	Plans   []string // [P1] the plans to choose from; nil: typed
	Profile profile.Profile
	CapHint string
}

// pages are parsed once, each with the layout.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"signin", "link", "operator", "team", "status", "hostname",
		"operator_domain", "operator_hostnames", "operator_account", "operator_terminate", "operator_audit", "operator_registrations", "operator_close", "operator_find"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

// layout is what every page shows around its own part.
type layout struct {
	Title    string
	Who      string // "" when signed out
	CSRF     string // the session's form token, for sign-out
	Profile  profile.Profile
	Page     any
	Operator bool
}

// render writes a page; the body is built first so that a template error
// is a 500, not half a page.
func (h *Handler) render(w http.ResponseWriter, status int, name string, l layout) {
	l.Profile = h.cfg.Profile
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", l); err != nil {
		h.log.Error("dashboard: rendering a page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// Pages hold secrets shown once (keys, links) and per-session tokens.
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

type statusPage struct{ Heading, Message string }

// status writes a page that only says what happened.
func (h *Handler) status(w http.ResponseWriter, code int, heading, msg string) {
	h.render(w, code, "status", layout{Title: heading, Page: statusPage{heading, msg}})
}

// failed answers an error that no form field explains.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	if p, ok := apierror.As(err); ok {
		status := httperr.Status(p.Code)
		httperr.Header(w.Header(), p)
		h.status(w, status, http.StatusText(status), p.Message)
		return
	}
	if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		h.log.Warn("dashboard: database unavailable", "path", r.URL.Path, "err", err)
		h.status(w, http.StatusServiceUnavailable, "Try again shortly", "The database is unavailable; try again shortly.")
		return
	}
	h.log.Error("dashboard: unexpected error", "path", r.URL.Path, "err", err)
	h.status(w, http.StatusInternalServerError, "Something went wrong", "An unexpected error occurred; it has been logged.")
}

// form is a submitted form: what was typed (shown again after an error)
// and the errors, each next to its field ("" for the form as a whole).
type form struct {
	Values map[string]string
	Errors map[string]string
}

func newForm() *form { return &form{Values: map[string]string{}, Errors: map[string]string{}} }

// Checked reports whether a checkbox value was submitted.
func (f *form) Checked(name, value string) bool {
	for _, v := range strings.Split(f.Values[name], "\n") {
		if v == value {
			return true
		}
	}
	return false
}

// Failed reports whether the form has any error.
func (f *form) Failed() bool { return len(f.Errors) > 0 }

// fail puts a rule's error next to the field it names. The rules' messages
// start with the API's field name ("name is required", "scopes[0].domain
// ...", "params.alpn[0] ..."); fields maps those to this form's fields, a
// member's path or else its object's name. It returns the status to answer
// with, or ok false for an error that is not a rule's.
func (f *form) fail(err error, fields map[string]string) (status int, ok bool) {
	p, ok := apierror.As(err)
	if !ok {
		return 0, false
	}
	word := p.Message
	if i := strings.IndexAny(word, " ["); i >= 0 {
		word = word[:i]
	}
	field, named := fields[word] // a member by its path: "params.alpn[0] ..."
	if before, _, dotted := strings.Cut(word, "."); !named && dotted {
		field, named = fields[before]
	}
	if !named {
		field = ""
	}
	f.Errors[field] = p.Message
	return httperr.Status(p.Code), true
}
