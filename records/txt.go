package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// TXT limits of the spec. A character-string is length-prefixed by one octet,
// hence 255; the total keeps a record well inside a UDP answer.
const (
	MaxStringLen = 255
	MaxTextLen   = 2048
)

// parseTXT takes text as one string, which is split into 255-byte strings,
// or (on create) a list of strings sent as-is. On change only one string of
// at most 255 bytes is accepted, per the spec's limits.
func parseTXT(in Input, create bool, _ string) (Data, error) {
	raw := bytes.TrimSpace(in.Text)
	if len(raw) == 0 || string(raw) == "null" {
		return Data{}, apierror.BadRequest("text is required")
	}
	var list []string
	var one string
	switch {
	case json.Unmarshal(raw, &one) == nil:
		if !create && len(one) > MaxStringLen {
			return Data{}, apierror.BadRequest("text must be at most %d bytes when changing a record, got %d", MaxStringLen, len(one))
		}
		list = []string{one}
	case json.Unmarshal(raw, &list) == nil:
		if !create {
			return Data{}, apierror.BadRequest("text must be one string when changing a record, not a list")
		}
		if len(list) == 0 {
			return Data{}, apierror.BadRequest("text must not be empty")
		}
		for i, s := range list {
			if s == "" {
				return Data{}, apierror.BadRequest("text[%d] must not be empty", i)
			}
			if len(s) > MaxStringLen {
				return Data{}, apierror.BadRequest("text[%d] is %d bytes; each string may hold at most %d bytes", i, len(s), MaxStringLen)
			}
		}
	default:
		return Data{}, apierror.BadRequest("text must be a string or a list of strings")
	}
	text := strings.Join(list, "")
	if text == "" {
		return Data{}, apierror.BadRequest("text must not be empty")
	}
	if i, r := control(text); i >= 0 {
		return Data{}, apierror.BadRequest("text must not hold control characters, found %U at offset %d", r, i)
	}
	if len(text) > MaxTextLen {
		return Data{}, apierror.BadRequest("text must be at most %d bytes in total, got %d", MaxTextLen, len(text))
	}
	d := Data{Text: text}
	if len(list) > 1 && !slices.Equal(list, split(text)) {
		d.Strings = list
	}
	return d, nil
}

// split cuts text into 255-byte character-strings. It cuts octets, not
// characters: a UTF-8 sequence may straddle two strings, and the client
// that concatenates them gets the bytes back whole.
func split(text string) []string {
	var out []string
	for len(text) > MaxStringLen {
		out = append(out, text[:MaxStringLen])
		text = text[MaxStringLen:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// strs are the character-strings DNS serves.
func (d Data) strs() []string {
	if d.Strings != nil {
		return d.Strings
	}
	return split(d.Text)
}

func txtRR(d Data, h dns.RR_Header) (dns.RR, error) {
	ss := d.strs()
	if len(ss) == 0 {
		return nil, errors.New("text missing")
	}
	txt := make([]string, len(ss))
	for i, s := range ss {
		if len(s) > MaxStringLen {
			return nil, errors.New("text string over 255 bytes")
		}
		txt[i] = escape(s)
	}
	return &dns.TXT{Hdr: h, Txt: txt}, nil
}

// escape writes s in the presentation form miekg/dns keeps TXT and CAA
// values in: packing reads a backslash as the start of an escape, so the
// caller's backslashes and quotes are escaped for the wire to carry the
// caller's exact bytes. Bytes outside printable ASCII become \DDD, the form
// Unpack produces, so that an RR built here equals the same RR read off the
// wire (dns.IsDuplicate, CoreDNS's test helpers).
func escape(s string) string {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= ' ' && s[i] <= '~' && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c > '~':
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescape reads text in presentation form (what escape writes: \X and
// \DDD) back into the bytes it stands for.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c != '\\' || i+1 == len(s):
			b.WriteByte(c)
		case i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]):
			n := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0')
			b.WriteByte(byte(min(n, 255)))
			i += 3
		default:
			b.WriteByte(s[i+1])
			i++
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
