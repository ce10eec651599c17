package dashboard

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/storage"
)

// The operator's page of the hostnames of any team, with the abuse
// actions (suspend, restore, terminate), which call what the admin API
// calls.

// opListed is how many hostnames the operator's list shows at once, newest
// first; the page says how many there are in all.
const opListed = 50

type opHostRow struct {
	storage.Hostname
	State string
	Team  string
	Error string // the last action's error on this row
}

type opHostnamesView struct {
	CSRF      string
	Teams     []opTeam
	Team      string // the filter, "" for every team
	Hostnames []opHostRow
	Skip      int // how many newer hostnames the page leaves out
	Pager     pager
	Notice    string
	Error     string // an action's error when its row is not listed
}

type opTeam struct{ ID, Name string }

func (h *Handler) opHostnamesPage(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	skip, ok := skipOf(q.Get("skip"))
	if !ok {
		h.badSkip(w)
		return
	}
	h.renderOpHostnames(w, r, v, http.StatusOK, q.Get("team"), opHostnamesView{Skip: skip})
}

// opHostnamesQuery is the list's query for a team filter and a skip, team
// first, each left out when empty.
func opHostnamesQuery(team string, skip int) string {
	q := ""
	if team != "" {
		q = "team=" + url.QueryEscape(team)
	}
	if skip > 0 {
		if q != "" {
			q += "&"
		}
		q += "skip=" + strconv.Itoa(skip)
	}
	if q == "" {
		return ""
	}
	return "?" + q
}

// opHostnames is a page of the hostnames of one team (or of every team,
// merged), newest first as the team's own list orders them, and how many
// there are in all. Merged, each team's newest skip+opListed are read, as
// there is no list across teams; that is at most every hostname.
func (h *Handler) opHostnames(ctx context.Context, team string, teams []opTeam, skip int) ([]storage.Hostname, int, error) {
	var all []storage.Hostname
	total := 0
	for _, t := range teams {
		if team != "" && t.ID != team {
			continue
		}
		limit, from := skip+opListed, 0
		if team != "" {
			limit, from = opListed, skip
		}
		page, err := h.hostnames.List(ctx, &access.Principal{AccountID: t.ID, Scopes: access.All()}, limit, from)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, page.Hostnames...)
		total += page.Total
	}
	if team == "" {
		slices.SortFunc(all, func(a, b storage.Hostname) int {
			return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ID, a.ID))
		})
		all = all[min(skip, len(all)):]
	}
	return all[:min(len(all), opListed)], total, nil
}

func (h *Handler) renderOpHostnames(w http.ResponseWriter, r *http.Request, v *visit, status int, team string, hv opHostnamesView) {
	as, err := h.accounts.List(r.Context())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	names := map[string]string{}
	for _, a := range as {
		hv.Teams = append(hv.Teams, opTeam{a.ID, a.Name})
		names[a.ID] = a.Name
	}
	if _, ok := names[team]; !ok {
		team = ""
	}
	hv.Team = team
	hs, total, err := h.opHostnames(r.Context(), team, hv.Teams, hv.Skip)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	now := time.Now()
	failedID := r.PathValue("id")
	for _, hn := range hs {
		row := opHostRow{Hostname: hn, State: h.hostnames.Status(&hn, now), Team: names[hn.AccountID]}
		if hn.ID == failedID && hv.Error != "" {
			row.Error, hv.Error = hv.Error, ""
		}
		hv.Hostnames = append(hv.Hostnames, row)
	}
	hv.Pager = newPager(hv.Skip, opListed, len(hs), total, hv.Skip+len(hs) < total, func(skip int) string {
		return Prefix + "operator/hostnames" + opHostnamesQuery(team, skip)
	})
	hv.CSRF = v.csrf
	h.renderOp(w, status, "operator_hostnames", "Hostnames", v, hv)
}

// opAbuse runs one of the admin API's abuse actions and shows the list again,
// with what happened.
func (h *Handler) opAbuse(w http.ResponseWriter, r *http.Request, v *visit, verb, done string, action func(context.Context, string) (*storage.Hostname, error)) {
	team := r.PostFormValue("team")
	skip, ok := skipOf(r.PostFormValue("skip"))
	if !ok {
		h.badSkip(w)
		return
	}
	hn, err := action(r.Context(), r.PathValue("id"))
	if err != nil {
		p, ok := apierror.As(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpHostnames(w, r, v, httperr.Status(p.Code), team, opHostnamesView{Skip: skip, Error: p.Message})
		return
	}
	h.log.Info("dashboard: abuse action", "action", verb, "hostname", hn.ID)
	h.renderOpHostnames(w, r, v, http.StatusOK, team, opHostnamesView{Skip: skip, Notice: hn.Name + " is " + done + "."})
}

func (h *Handler) opSuspend(w http.ResponseWriter, r *http.Request, v *visit) {
	h.opAbuse(w, r, v, "suspend", "suspended", h.abuse.Suspend)
}

func (h *Handler) opRestore(w http.ResponseWriter, r *http.Request, v *visit) {
	h.opAbuse(w, r, v, "restore", "restored (pending until every nameserver serves it)", h.abuse.Restore)
}

type opTerminateView struct {
	CSRF     string
	Hostname opHostRow
	Team     string // the list's filter and page, to go back to
	Skip     int
}

// Back is the list's page the confirmation came from.
func (tv opTerminateView) Back() string {
	return Prefix + "operator/hostnames" + opHostnamesQuery(tv.Team, tv.Skip)
}

// opConfirmTerminate is the confirmation step before a termination, a page
// of its own so that it needs no JavaScript.
func (h *Handler) opConfirmTerminate(w http.ResponseWriter, r *http.Request, v *visit) {
	team, id := r.URL.Query().Get("team"), r.PathValue("id")
	skip, ok := skipOf(r.URL.Query().Get("skip"))
	if !ok {
		h.badSkip(w)
		return
	}
	as, err := h.accounts.List(r.Context())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	var teams []opTeam
	for _, a := range as {
		teams = append(teams, opTeam{a.ID, a.Name})
	}
	// Only a listed hostname can be confirmed: the rules read a hostname
	// through its team, and the list (filtered as it was) is what the
	// operator chose from.
	hs, _, err := h.opHostnames(r.Context(), team, teams, skip)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, hn := range hs {
		if hn.ID == id {
			tv := opTerminateView{CSRF: v.csrf, Team: team, Skip: skip, Hostname: opHostRow{Hostname: hn, State: h.hostnames.Status(&hn, time.Now())}}
			for _, t := range teams {
				if t.ID == hn.AccountID {
					tv.Hostname.Team = t.Name
				}
			}
			h.renderOp(w, http.StatusOK, "operator_terminate", "Terminate "+hn.Name, v, tv)
			return
		}
	}
	h.status(w, http.StatusNotFound, "Not found", "Hostname not found among the listed ones.")
}

// opTerminate terminates only when the confirmation page's form was
// sent; any other post is sent to that page first.
func (h *Handler) opTerminate(w http.ResponseWriter, r *http.Request, v *visit) {
	if r.PostFormValue("confirm") != "yes" {
		skip, _ := skipOf(r.PostFormValue("skip")) // a bad one (never the page's) asks from the first page
		next := Prefix + "operator/hostnames/" + url.PathEscape(r.PathValue("id")) + "/terminate" +
			opHostnamesQuery(r.PostFormValue("team"), skip)
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	h.opAbuse(w, r, v, "terminate", "terminated", h.abuse.Terminate)
}
