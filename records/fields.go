package records

import (
	"fmt"
	"unicode"

	"github.com/hostmint/hostmint/apierror"
)

// number checks a required integer field against [lo, hi].
func number(p *int, field string, lo, hi int) (int, error) {
	if p == nil {
		return 0, apierror.BadRequest("%s is required: an integer from %d to %d", field, lo, hi)
	}
	if *p < lo || *p > hi {
		return 0, apierror.BadRequest("%s must be an integer from %d to %d, got %d", field, lo, hi, *p)
	}
	return *p, nil
}

// hexField checks a digest field: lowercase hex without separators, the form
// the spec answers with, so a stored value compares equal to what is served.
func hexField(p *string, field string) (string, error) {
	if p == nil || *p == "" {
		return "", apierror.BadRequest("%s is required: lowercase hex digits", field)
	}
	s := *p
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			return "", apierror.BadRequest("%s must be lowercase hex, found %q", field, rune(c))
		default:
			return "", apierror.BadRequest("%s must be hex digits without separators, found %q", field, rune(c))
		}
	}
	return s, nil
}

// control finds the first control character in s: C0, DEL or C1 (U+0080 to
// U+009F, which UTF-8 spells in two bytes). Such characters are unprintable
// in every client and a common way to smuggle line breaks into zone files
// and logs. It answers -1 when there is none.
func control(s string) (offset int, r rune) {
	for i, r := range s {
		if unicode.IsControl(r) {
			return i, r
		}
	}
	return -1, 0
}

// uint8Of and uint16Of take a stored number into an RR field; they fail
// rather than wrap around.
func uint8Of(p *int, field string) (uint8, error) {
	if p == nil || *p < 0 || *p > 0xff {
		return 0, fmt.Errorf("%s missing or out of range", field)
	}
	return uint8(*p), nil
}

func uint16Of(p *int, field string) (uint16, error) {
	if p == nil || *p < 0 || *p > 0xffff {
		return 0, fmt.Errorf("%s missing or out of range", field)
	}
	return uint16(*p), nil
}

func ptr(v int) *int { return &v }
