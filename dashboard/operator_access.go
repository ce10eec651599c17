package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/storage"
)

// The operator's control of a team's access, on the account's page: who
// can open its dashboard (each ended on its own, or all at once), and the
// team's status and plan end, through the same rules as the admin API.

// planEndLayout is the form's plan end: what a datetime-local field sends,
// read as UTC.
const planEndLayout = "2006-01-02T15:04"

// accessForm is the access form as the account stands.
func accessForm(a *storage.Account) *form {
	f := newForm()
	f.Values["status"] = storage.AccountActive
	if a.SuspendedAt != 0 {
		f.Values["status"] = storage.AccountSuspended
	}
	if a.PlanEndsAt != 0 {
		f.Values["plan_ends_at"] = time.UnixMilli(a.PlanEndsAt).UTC().Format(planEndLayout)
	}
	return f
}

// opChangeAccess suspends or restores a team and sets when its plan ends
// (empty: never), as PATCH /api/admin/accounts/{id} does.
func (h *Handler) opChangeAccess(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	f := newForm()
	for _, k := range []string{"status", "plan_ends_at"} {
		f.Values[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	status := f.Values["status"]
	var end time.Time
	if s := f.Values["plan_ends_at"]; s != "" {
		t, err := time.Parse(planEndLayout, s)
		if err != nil {
			if t, err = time.Parse(planEndLayout+":05", s); err != nil {
				f.Errors["plan_ends_at"] = "plan end must be a date and time (UTC), such as 2027-01-31T00:00, or empty for never"
				h.renderOpAccount(w, r, v, http.StatusBadRequest, opAccountView{AccessForm: f})
				return
			}
		}
		end = t
	}
	a, err := h.accounts.Patch(r.Context(), id, accounts.Input{Status: &status, PlanEnd: &end})
	if err != nil {
		st, ok := f.fail(err, map[string]string{"status": "status", "plan_ends_at": "plan_ends_at"})
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpAccount(w, r, v, st, opAccountView{AccessForm: f})
		return
	}
	h.log.Info("dashboard: team access changed", "account", id, "access", a.Access(time.Now().UnixMilli()))
	http.Redirect(w, r, Prefix+"operator/accounts/"+id, http.StatusSeeOther)
}

// opEndSession signs one browser of the team out.
func (h *Handler) opEndSession(w http.ResponseWriter, r *http.Request, v *visit) {
	id, sid := r.PathValue("id"), r.PathValue("session")
	h.opActed(w, r, v, h.accounts.EndTeamSession(r.Context(), id, sid), "That browser is signed out.")
}

// opEndLink withdraws one unused sign-in link of the team.
func (h *Handler) opEndLink(w http.ResponseWriter, r *http.Request, v *visit) {
	id, lid := r.PathValue("id"), r.PathValue("link")
	h.opActed(w, r, v, h.accounts.EndSigninLink(r.Context(), id, lid), "That sign-in link is withdrawn; it no longer signs in.")
}

// opEndAll signs out every browser of the team and withdraws its links.
func (h *Handler) opEndAll(w http.ResponseWriter, r *http.Request, v *visit) {
	e, err := h.accounts.EndTeamAccess(r.Context(), r.PathValue("id"))
	h.opActed(w, r, v, err, plural(e.Sessions, "browser")+" signed out, "+plural(e.SigninLinks, "sign-in link")+" withdrawn.")
}

func plural(n int, what string) string {
	s := strconv.Itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// accessTable is one list of the account page's "who can sign in": the
// signed-in browsers, or the unused links.
type accessTable struct {
	ID, Caption, Empty string
	Started, Ends      string // the columns' headings
	Path               string // under the account: where a row's end form posts
	Button, Noun       string
	Rows               []accessRow
}

type accessRow struct {
	ID                   string
	CreatedAt, ExpiresAt int64
}

func accessTables(a *accounts.Access) []accessTable {
	sessions := accessTable{ID: "sessions", Caption: "Signed-in browsers", Empty: "No signed-in browsers.",
		Started: "Signed in", Ends: "Session ends", Path: "sessions", Button: "Sign out", Noun: "browser"}
	for _, s := range a.Sessions {
		sessions.Rows = append(sessions.Rows, accessRow{s.ID, s.CreatedAt, s.ExpiresAt})
	}
	links := accessTable{ID: "signin-links", Caption: "Sign-in links not used yet", Empty: "No unused sign-in links.",
		Started: "Issued", Ends: "Expires", Path: "signin-links", Button: "Withdraw", Noun: "sign-in link"}
	for _, l := range a.SigninLinks {
		links.Rows = append(links.Rows, accessRow{l.ID, l.CreatedAt, l.ExpiresAt})
	}
	return []accessTable{sessions, links}
}
