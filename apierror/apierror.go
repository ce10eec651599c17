// Package apierror holds the one error type the HTTP API answers with: an HTTP
// status, a stable machine-readable code and a human-readable message.
//
// Rules packages return these so that the mapping from a broken rule to the
// spec's status and code is decided where the rule is, and written in one
// place (adminapi). It knows nothing of storage or DNS.
package apierror

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an API error: {error, code} in the body, Status on the wire.
type Error struct {
	Status  int
	Code    string
	Message string
	// Header is set on the response as well (Retry-After, Location, Allow).
	Header http.Header
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New builds an Error; the message is formatted with fmt.Sprintf.
func New(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// The codes of the spec's error table.
const (
	CodeBadRequest         = "BAD_REQUEST"
	CodeUnauthorized       = "UNAUTHORIZED"
	CodeKeyExpired         = "KEY_EXPIRED"
	CodePaymentRequired    = "PAYMENT_REQUIRED"
	CodeForbidden          = "FORBIDDEN"
	CodeNotFound           = "NOT_FOUND"
	CodeMethodNotAllowed   = "METHOD_NOT_ALLOWED"
	CodeConflict           = "CONFLICT"
	CodeDomainProvisioning = "DOMAIN_PROVISIONING"
	CodeNoDomainAvailable  = "NO_DOMAIN_AVAILABLE"
	CodeRateLimited        = "RATE_LIMITED"
	CodeInternal           = "INTERNAL_ERROR"
	CodeNotImplemented     = "NOT_IMPLEMENTED"
	CodeUnavailable        = "SERVICE_UNAVAILABLE"
)

// Codes are every code the service answers with, in the order of the
// spec's table: the OpenAPI description's enumeration is made from it.
// METHOD_NOT_ALLOWED is this service's addition to the spec's codes (405
// with Allow, for a path that exists with other methods).
var Codes = []string{
	CodeBadRequest, CodeUnauthorized, CodeKeyExpired, CodePaymentRequired, CodeForbidden, CodeNotFound,
	CodeMethodNotAllowed, CodeConflict, CodeDomainProvisioning, CodeNoDomainAvailable, CodeRateLimited,
	CodeInternal, CodeNotImplemented, CodeUnavailable,
}

// BadRequest is 400 BAD_REQUEST.
func BadRequest(format string, args ...any) *Error {
	return New(http.StatusBadRequest, CodeBadRequest, format, args...)
}

// Unauthorized is 401 UNAUTHORIZED with the spec's message.
func Unauthorized() *Error {
	return New(http.StatusUnauthorized, CodeUnauthorized, "Missing or invalid API key")
}

// Forbidden is 403 FORBIDDEN.
func Forbidden(format string, args ...any) *Error {
	return New(http.StatusForbidden, CodeForbidden, format, args...)
}

// NotFound is 404 NOT_FOUND.
func NotFound(format string, args ...any) *Error {
	return New(http.StatusNotFound, CodeNotFound, format, args...)
}

// HostnameNotFound is the spec's 404 for a hostname that is not the caller's.
func HostnameNotFound() *Error { return NotFound("Hostname not found") }

// Conflict is 409 CONFLICT.
func Conflict(format string, args ...any) *Error {
	return New(http.StatusConflict, CodeConflict, format, args...)
}

// RateLimited is 429 RATE_LIMITED.
func RateLimited(format string, args ...any) *Error {
	return New(http.StatusTooManyRequests, CodeRateLimited, format, args...)
}

// Unavailable is 503 SERVICE_UNAVAILABLE.
func Unavailable(format string, args ...any) *Error {
	return New(http.StatusServiceUnavailable, CodeUnavailable, format, args...)
}

// Internal is 500 INTERNAL_ERROR; the message never carries the cause.
func Internal() *Error {
	return New(http.StatusInternalServerError, CodeInternal, "Unexpected server error")
}

// NotImplemented is 501 NOT_IMPLEMENTED.
func NotImplemented(format string, args ...any) *Error {
	return New(http.StatusNotImplemented, CodeNotImplemented, format, args...)
}
