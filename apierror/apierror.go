// Package apierror holds the one error type the rules refuse with: a
// stable machine-readable code that says which kind of rule refused (the
// codes the service publishes), a message in the rule's own words, and
// when to come back.
//
// It speaks no protocol: each front door maps a code to its own answer in
// one place (the HTTP API and the dashboard: httperr; dyndns2: its return
// words; DNS UPDATE: an rcode and an Extended DNS Error). It knows nothing
// of storage, HTTP or DNS.
package apierror

import (
	"errors"
	"fmt"
	"time"
)

// Error is a rule's refusal.
type Error struct {
	Code    string
	Message string
	// RetryAfter, when set, is how long until trying again can succeed (a
	// rate limit, a domain still being set up).
	RetryAfter time.Duration
	// Location, when set, is the API path of what to watch meanwhile (the
	// domain being set up).
	Location string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New builds an Error; the message is formatted with fmt.Sprintf.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
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

// BadRequest is BAD_REQUEST: the input breaks a rule of its form.
func BadRequest(format string, args ...any) *Error {
	return New(CodeBadRequest, format, args...)
}

// Unauthorized is UNAUTHORIZED with the spec's message: no credential, or
// not one the service issued.
func Unauthorized() *Error {
	return New(CodeUnauthorized, "Missing or invalid API key")
}

// Forbidden is FORBIDDEN: the credential may not do this.
func Forbidden(format string, args ...any) *Error {
	return New(CodeForbidden, format, args...)
}

// NotFound is NOT_FOUND.
func NotFound(format string, args ...any) *Error {
	return New(CodeNotFound, format, args...)
}

// HostnameNotFound is the spec's NOT_FOUND for a hostname that is not the caller's.
func HostnameNotFound() *Error { return NotFound("Hostname not found") }

// Conflict is CONFLICT: the state of what is asked for refuses it.
func Conflict(format string, args ...any) *Error {
	return New(CodeConflict, format, args...)
}

// RateLimited is RATE_LIMITED; set RetryAfter.
func RateLimited(format string, args ...any) *Error {
	return New(CodeRateLimited, format, args...)
}

// Unavailable is SERVICE_UNAVAILABLE: try again shortly.
func Unavailable(format string, args ...any) *Error {
	return New(CodeUnavailable, format, args...)
}

// Internal is INTERNAL_ERROR; the message never carries the cause.
func Internal() *Error {
	return New(CodeInternal, "Unexpected server error")
}

// NotImplemented is NOT_IMPLEMENTED: this deployment lacks what it needs.
func NotImplemented(format string, args ...any) *Error {
	return New(CodeNotImplemented, format, args...)
}

// BadCursor answers a list's cursor that none of its pages handed out.
func BadCursor() *Error {
	return BadRequest("cursor is not one a page of this list handed out")
}
