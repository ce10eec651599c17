package adminapi

import (
	"net/http"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

type auditView struct {
	ID        int64  `json:"id"`
	At        string `json:"at"`
	Actor     string `json:"actor"`
	AccountID string `json:"account_id"`
	Action    string `json:"action"`
	Object    string `json:"object"`
	Result    string `json:"result"`
	Status    int    `json:"status"`
	Address   string `json:"address"`
	Detail    string `json:"detail"`
}

type auditListView struct {
	Entries    []auditView `json:"entries"`
	NextCursor *int64      `json:"next_cursor"`
}

func (s *Server) listAudit(c *call) (int, any, error) {
	if s.cfg.Audit == nil {
		return 0, nil, apierror.NotImplemented("this server keeps no audit log")
	}
	q := c.r.URL.Query()
	f := storage.AuditFilter{Actor: q.Get("actor"), AccountID: q.Get("account_id"), Action: q.Get("action"),
		Object: q.Get("object"), Result: q.Get("result")}
	var err error
	if f.Since, err = timeParam(c.r, "since"); err != nil {
		return 0, nil, err
	}
	if f.Until, err = timeParam(c.r, "until"); err != nil {
		return 0, nil, err
	}
	limit, err := intParam(c.r, "limit", defaultLimit)
	if err != nil {
		return 0, nil, err
	}
	cursor, err := intParam(c.r, "cursor", 0)
	if err != nil {
		return 0, nil, err
	}
	f.Before = int64(max(cursor, 0))
	page, err := s.cfg.Audit.List(c.r.Context(), f, min(max(limit, 1), maxLimit))
	if err != nil {
		return 0, nil, err
	}
	out := auditListView{Entries: make([]auditView, len(page.Entries))}
	for i, e := range page.Entries {
		out.Entries[i] = auditView{ID: e.ID, At: ts(e.At), Actor: e.Actor, AccountID: e.AccountID, Action: e.Action,
			Object: e.Object, Result: e.Result, Status: e.Status, Address: e.Address, Detail: e.Detail}
	}
	if page.Next != 0 {
		out.NextCursor = &page.Next
	}
	return http.StatusOK, out, nil
}

// timeParam reads an RFC 3339 query parameter as Unix ms; absent: 0.
func timeParam(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, apierror.BadRequest("query parameter %s must be an RFC 3339 date-time (2006-01-02T15:04:05Z), got %q", name, v)
	}
	return t.UnixMilli(), nil
}
