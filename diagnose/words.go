package diagnose

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// inWords says what went wrong asking a server, for a person: never the
// socket addresses and dial errors of the service's own network.
func inWords(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "cannot be reached"
	case errors.Is(err, errAnswered):
		return err.Error()
	}
	return "could not be asked"
}

// errAnswered wraps an answer that is itself the error ("answered
// SERVFAIL"), whose text is already in words.
var errAnswered = errors.New("answered")
