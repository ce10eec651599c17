package records

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/labels"
	"github.com/miekg/dns"
)

// caaTags are the property tags of RFC 8659 a caller may set. Others are
// either unknown to CAs (and ignored) or, with the critical flag, block all
// issuance; neither is what a caller means.
var caaTags = []string{"issue", "issuewild", "iodef"}

func parseCAA(in Input, _ bool, _ string) (Data, error) {
	flags := 0
	if in.Flags != nil {
		var err error
		if flags, err = number(in.Flags, "flags", 0, 0xff); err != nil {
			return Data{}, err
		}
	}
	if in.Tag == nil || *in.Tag == "" {
		return Data{}, apierror.BadRequest("tag is required: issue, issuewild or iodef")
	}
	tag := *in.Tag
	if !slices.Contains(caaTags, tag) {
		if slices.Contains(caaTags, labels.Lower(tag)) {
			return Data{}, apierror.BadRequest("tag must be lowercase, got %q", tag)
		}
		return Data{}, apierror.BadRequest("tag must be issue, issuewild or iodef, got %q", tag)
	}
	if in.Value == nil || *in.Value == "" {
		return Data{}, apierror.BadRequest("value is required (for issue and issuewild, \";\" forbids every CA)")
	}
	v := *in.Value
	if i, r := control(v); i >= 0 {
		return Data{}, apierror.BadRequest("value must not hold control characters, found %U at offset %d", r, i)
	}
	if len(v) > MaxStringLen {
		return Data{}, apierror.BadRequest("value must be at most %d bytes, got %d", MaxStringLen, len(v))
	}
	if tag == "iodef" && !iodefURL(v) {
		return Data{}, apierror.BadRequest("value of an iodef record must be a mailto:, http: or https: URL, got %q", v)
	}
	return Data{Flags: ptr(flags), Tag: tag, Value: v}, nil
}

// iodefURL reports whether v is a URL a CA can report to (RFC 8659 §4.4).
func iodefURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "mailto":
		addr := u.Opaque
		at := strings.IndexByte(addr, '@')
		return at > 0 && at < len(addr)-1
	case "http", "https":
		return u.Host != ""
	}
	return false
}

func caaRR(d Data, h dns.RR_Header) (dns.RR, error) {
	flags, err := uint8Of(d.Flags, "flags")
	if err != nil {
		return nil, err
	}
	if d.Tag == "" || d.Value == "" {
		return nil, errors.New("tag or value missing")
	}
	return &dns.CAA{Hdr: h, Flag: flags, Tag: d.Tag, Value: escape(d.Value)}, nil
}

// CAAPolicy checks a domain's CAA policy, each entry in presentation form
// (`FLAGS TAG "VALUE"`), by the rules of a caller's CAA record, and returns
// the entries in the form they are stored and served in.
func CAAPolicy(entries []string) ([]string, error) {
	norm := make([]string, 0, len(entries))
	for i, e := range entries {
		rr, err := dns.NewRR("caa.invalid. 300 IN CAA " + e)
		c, ok := rr.(*dns.CAA)
		if err != nil || !ok {
			return nil, apierror.BadRequest("caa[%d] %q is not FLAGS TAG \"VALUE\"", i, e)
		}
		if !strings.Contains(e, `"`) {
			return nil, apierror.BadRequest("caa[%d]: the value must be in double quotes", i)
		}
		flags, value := int(c.Flag), unescape(c.Value)
		if _, err := parseCAA(Input{Flags: &flags, Tag: &c.Tag, Value: &value}, false, ""); err != nil {
			msg := err.Error()
			if pe, ok := apierror.As(err); ok {
				msg = pe.Message
			}
			return nil, apierror.BadRequest("caa[%d]: %s", i, msg)
		}
		norm = append(norm, strings.TrimPrefix(c.String(), c.Hdr.String()))
	}
	return norm, nil
}
