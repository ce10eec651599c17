package diagnose

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A CT log that answers without end is read up to ctMaxBody, not held.
func TestCTLogAnswerBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("["))
		chunk := []byte(strings.Repeat(`{"issuer_name":"x"},`, 1000))
		for range ctMaxBody/len(chunk) + 2 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := checkCertificate(context.Background(), Config{CTLog: srv.URL}, Subject{Name: "web.example.net"})
	if c.Verdict != Unknown || !strings.Contains(c.Detail, "more than 8 MB") {
		t.Errorf("an endless CT answer: %s %q", c.Verdict, c.Detail)
	}
}

func TestInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{os.ErrDeadlineExceeded, "did not answer in time"},
		{&os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}, "refused the connection"},
		{errors.Join(errAnswered, errors.New("x")), "answered\nx"},
		{errors.New("dial tcp 127.0.0.1:37998: something"), "could not be asked"},
	} {
		if got := inWords(tc.err); got != tc.want {
			t.Errorf("inWords(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
