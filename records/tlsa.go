package records

import (
	"errors"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// maxAssociation bounds a full-certificate association (matching type 0):
// the RDATA of one RR holds at most 65535 octets, three of them the fields.
const maxAssociation = 2 * (0xffff - 3)

// parseTLSA: the owner name carries the port and protocol (RFC 6698 §3), so
// a TLSA record anywhere else would never be looked up.
func parseTLSA(in Input, _ bool, label string) (Data, error) {
	if err := tlsaName(label); err != nil {
		return Data{}, err
	}
	usage, err := number(in.Usage, "usage", 0, 3)
	if err != nil {
		return Data{}, err
	}
	sel, err := number(in.Selector, "selector", 0, 1)
	if err != nil {
		return Data{}, err
	}
	mt, err := number(in.MatchingType, "matching_type", 0, 2)
	if err != nil {
		return Data{}, err
	}
	assoc, err := hexField(in.Association, "association")
	if err != nil {
		return Data{}, err
	}
	switch n := len(assoc); {
	case mt == 1 && n != 64:
		return Data{}, apierror.BadRequest("association must be 64 hex digits for matching_type 1 (SHA-256), got %d", n)
	case mt == 2 && n != 128:
		return Data{}, apierror.BadRequest("association must be 128 hex digits for matching_type 2 (SHA-512), got %d", n)
	case mt == 0 && n%2 != 0:
		return Data{}, apierror.BadRequest("association must be an even number of hex digits (whole octets), got %d", n)
	case n > maxAssociation:
		return Data{}, apierror.BadRequest("association must be at most %d hex digits, got %d", maxAssociation, n)
	}
	return Data{Usage: ptr(usage), Selector: ptr(sel), MatchingType: ptr(mt), Association: assoc}, nil
}

// tlsaName checks that the name starts with _<port>._<protocol>; further
// labels may follow (_25._tcp.mail).
func tlsaName(label string) error {
	labels := strings.SplitN(label, ".", 3)
	if label == "" || len(labels) < 2 {
		return apierror.BadRequest("name of a TLSA record must start with _<port>._<protocol>, such as _443._tcp")
	}
	port := strings.TrimPrefix(labels[0], "_")
	n, err := strconv.Atoi(port)
	if port == labels[0] || err != nil || port[0] == '0' || n < 1 || n > 0xffff {
		return apierror.BadRequest("name of a TLSA record must start with _<port> where port is 1 to 65535, got %q", labels[0])
	}
	switch labels[1] {
	case "_tcp", "_udp", "_sctp":
	default:
		return apierror.BadRequest("name of a TLSA record needs _tcp, _udp or _sctp after the port, got %q", labels[1])
	}
	return nil
}

func tlsaRR(d Data, h dns.RR_Header) (dns.RR, error) {
	usage, err := uint8Of(d.Usage, "usage")
	if err != nil {
		return nil, err
	}
	sel, err := uint8Of(d.Selector, "selector")
	if err != nil {
		return nil, err
	}
	mt, err := uint8Of(d.MatchingType, "matching_type")
	if err != nil {
		return nil, err
	}
	if d.Association == "" {
		return nil, errors.New("association missing")
	}
	return &dns.TLSA{Hdr: h, Usage: usage, Selector: sel, MatchingType: mt, Certificate: d.Association}, nil
}
