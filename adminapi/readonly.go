package adminapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/hostmint/hostmint/storage"
)

// ReadOnly is the API of a read-only DNS node: GET /api/health as a
// writer answers it, and every other request 503 SERVICE_UNAVAILABLE
// saying the node is read-only (the storage's ErrReadOnly, translated
// where every error is).
func ReadOnly(health func(context.Context) (Health, error), observe func(Outcome), log *slog.Logger) http.Handler {
	s := &Server{cfg: Config{Health: health, Observe: observe}, log: log, mux: http.NewServeMux(), unrouted: storage.ErrReadOnly}
	for _, rt := range s.routeTable() {
		if rt.method == http.MethodGet && rt.path == "/api/health" {
			s.routes = append(s.routes, rt)
			s.mux.Handle(rt.method+" "+rt.path, s.endpoint(&s.routes[0]))
		}
	}
	return s
}
