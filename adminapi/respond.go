package adminapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/storage"
)

// How every answer is written: JSON that is not cached, an error in the
// spec's {error, code} shape with the status its code stands for.

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
	noteRefusal(w, p.Code, p.Message)
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

// ts writes a stored time the way every response does.
func ts(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
