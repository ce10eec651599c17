package audit

import "net/http"

// StatusWriter notes the status a handler answered with, which a refusal's
// entry records.
type StatusWriter struct {
	http.ResponseWriter
	Status int // 0 until the handler writes
}

func (w *StatusWriter) WriteHeader(status int) {
	if w.Status == 0 {
		w.Status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
