package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// auditListed is how many audit entries the operator's page shows at once;
// older ones are a link away, as the API pages them.
const auditListed = 50

// auditFilters are the page's filter fields, the query parameters the
// "Older entries" link carries on.
var auditFilters = []string{"actor", "account", "object", "result"}

type auditRow struct {
	storage.AuditEntry
	When string // At in UTC, to the second: entries often share a minute
	Team string // the account's name, "" when it is no longer known
}

type opAuditView struct {
	Kept    bool // false: the server keeps no audit log
	Filter  map[string]string
	Entries []auditRow
	Older   string // the next page's URL, "" on the last page
	Paged   bool   // this is not the first page
}

// opAuditPage lists the audit log, newest first, as GET /api/admin/audit
// does, with the same filters by exact value. It only reads.
func (h *Handler) opAuditPage(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	av := opAuditView{Kept: h.cfg.Audit != nil, Filter: map[string]string{}}
	for _, k := range auditFilters {
		av.Filter[k] = strings.TrimSpace(q.Get(k))
	}
	if !av.Kept {
		h.renderOp(w, http.StatusOK, "operator_audit", "Audit log", v, av)
		return
	}
	f := storage.AuditFilter{Actor: av.Filter["actor"], AccountID: av.Filter["account"],
		Object: av.Filter["object"], Result: av.Filter["result"]}
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			h.status(w, http.StatusBadRequest, "Bad request", "The cursor must be a positive whole number; follow the page's links.")
			return
		}
		f.Before, av.Paged = n, true
	}
	page, err := h.cfg.Audit.List(r.Context(), f, auditListed)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	as, err := h.accounts.List(r.Context())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	names := map[string]string{}
	for _, a := range as {
		names[a.ID] = a.Name
	}
	for _, e := range page.Entries {
		av.Entries = append(av.Entries, auditRow{AuditEntry: e, Team: names[e.AccountID],
			When: time.UnixMilli(e.At).UTC().Format("2006-01-02 15:04:05")})
	}
	if page.Next != 0 {
		av.Older = av.url(page.Next)
	}
	h.renderOp(w, http.StatusOK, "operator_audit", "Audit log", v, av)
}

// Newest is the first page's URL with the same filters.
func (av opAuditView) Newest() string { return av.url(0) }

// url is the page of entries older than cursor (0: the newest) with av's
// filters; empty filters are left out so the URL stays short.
func (av opAuditView) url(cursor int64) string {
	q := url.Values{}
	if cursor != 0 {
		q.Set("cursor", strconv.FormatInt(cursor, 10))
	}
	for _, k := range auditFilters {
		if av.Filter[k] != "" {
			q.Set(k, av.Filter[k])
		}
	}
	if len(q) == 0 {
		return Prefix + "operator/audit"
	}
	return Prefix + "operator/audit?" + q.Encode()
}
