package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// Errors the store returns; everything else is unexpected.
var (
	ErrNotFound    = errors.New("storage: not found")
	ErrConflict    = errors.New("storage: conflict with an existing row")
	ErrUnavailable = errors.New("storage: database unavailable")
	// ErrReadOnly is every write's answer on a store opened read-only.
	ErrReadOnly = errors.New("storage: this node only reads the database")
)

// mapErr turns driver errors into the store's errors, keeping the cause.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict), errors.Is(err, ErrUnavailable), errors.Is(err, ErrReadOnly),
		errors.Is(err, ErrSeenMAC):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case isUnique(err) && isSeenMAC(err):
		return fmt.Errorf("%w: %v", ErrSeenMAC, err)
	case isUnique(err):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	case isUnavailable(err):
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

func isUnique(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// isUnavailable reports errors that say the database cannot be reached or
// has gone away, as opposed to errors in what was asked of it.
func isUnavailable(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		c := string(pqErr.Code)
		return strings.HasPrefix(c, "08") || c == "57P01" || c == "57P02" || c == "57P03" || c == "53300"
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "broken pipe", "connection reset", "bad connection",
		"driver: bad connection", "EOF", "no such host", "i/o timeout", "database is locked", "SQLITE_BUSY"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
