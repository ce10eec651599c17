package dnsupdate

import (
	"context"
	"errors"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Answer is the outcome of an UPDATE: its rcode and, for a refusal, an
// Extended DNS Error (RFC 8914) whose text says which rule refused.
type Answer struct {
	Rcode int
	EDE   *dns.EDNS0_EDE
	// Code is the rule's code when a rule refused (FORBIDDEN, CONFLICT,
	// ...), for the audit log, which records it as it does the API's.
	Code string
}

var ok = Answer{Rcode: dns.RcodeSuccess}

// AuditCode is the code the audit log records a refused message under: the
// rule's, or for a refusal of the door's own the API code of the same kind
// (a malformed message is BAD_REQUEST, a forbidden one FORBIDDEN), or for a
// failed prerequisite its rcode (NXRRSET, YXDOMAIN...), which says what
// RFC 2136 found; "" for none.
func (a Answer) AuditCode() string {
	switch {
	case a.Code != "":
		return a.Code
	case a.Rcode == dns.RcodeSuccess:
		return ""
	case a.Rcode == dns.RcodeFormatError, a.Rcode == dns.RcodeNotZone:
		return apierror.CodeBadRequest
	case a.Rcode == dns.RcodeRefused:
		return apierror.CodeForbidden
	case a.Rcode == dns.RcodeNotAuth:
		return apierror.CodeNotFound
	case a.Rcode == dns.RcodeNotImplemented:
		return apierror.CodeNotImplemented
	}
	return dns.RcodeToString[a.Rcode]
}

// Words are what the answer's EDE says, for the audit log ("" for none).
func (a Answer) Words() string {
	if a.EDE == nil {
		return ""
	}
	return a.EDE.ExtraText
}

// refuse is an Answer of the door's own (RFC 2136 semantics).
func refuse(rcode int, code uint16, text string) Answer {
	return Answer{Rcode: rcode, EDE: &dns.EDNS0_EDE{InfoCode: code, ExtraText: text}}
}

// answerOf maps what the rules said to an rcode: the one place where a
// rule's refusal becomes DNS. A rule that refuses is REFUSED with its code
// and message in the EDE text; a store that cannot be reached is SERVFAIL.
func answerOf(err error) Answer {
	if err == nil {
		return ok
	}
	p, isRule := apierror.As(err)
	switch {
	case isRule && p.Code == apierror.CodeUnavailable,
		errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return refuse(dns.RcodeServerFailure, dns.ExtendedErrorCodeNotReady, "the database is unavailable; try again shortly")
	case errors.Is(err, storage.ErrReadOnly):
		// REFUSED, not SERVFAIL: trying this node again will not help.
		a := refuse(dns.RcodeRefused, dns.ExtendedErrorCodeNotReady, apierror.CodeUnavailable+
			": this node is read-only: it serves DNS from a copy of the database and writes nothing; send UPDATE to a writer node")
		a.Code = apierror.CodeUnavailable
		return a
	case errors.Is(err, storage.ErrConflict):
		// A name the message mints was taken by another writer meanwhile.
		a := refuse(dns.RcodeRefused, dns.ExtendedErrorCodeOther, apierror.CodeConflict+": a name of the message was taken meanwhile; nothing was applied")
		a.Code = apierror.CodeConflict
		return a
	case !isRule || p.Code == apierror.CodeInternal:
		return refuse(dns.RcodeServerFailure, dns.ExtendedErrorCodeOther, "unexpected server error")
	case p.Code == apierror.CodeNotImplemented:
		a := refuse(dns.RcodeNotImplemented, dns.ExtendedErrorCodeNotSupported, p.Code+": "+p.Message)
		a.Code = p.Code
		return a
	}
	code := dns.ExtendedErrorCodeOther
	switch p.Code {
	case apierror.CodeForbidden, apierror.CodeUnauthorized, apierror.CodeKeyExpired, apierror.CodePaymentRequired:
		code = dns.ExtendedErrorCodeProhibited
	}
	a := refuse(dns.RcodeRefused, code, p.Code+": "+p.Message)
	a.Code = p.Code
	return a
}

// rejection carries an Answer of the door's own through the transaction,
// so that it rolls back like a rule's refusal.
type rejection struct{ Answer }

func (r *rejection) Error() string { return dns.RcodeToString[r.Rcode] + ": " + r.EDE.ExtraText }

func reject(rcode int, code uint16, text string) error {
	return &rejection{refuse(rcode, code, text)}
}

// ReadOnly is the door of a read-only node: it refuses every UPDATE as
// the store refuses a write there.
type ReadOnly struct{}

// Update implements the plugin's Updater.
func (ReadOnly) Update(context.Context, *dns.TSIG, string, *dns.Msg) (Answer, error) {
	return answerOf(storage.ErrReadOnly), nil
}
