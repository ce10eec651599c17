package records

import (
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/labels"
)

// MaxNameLen bounds a record name under the hostname. It leaves room for the
// hostname and its domain inside DNS's 255-byte limit on a whole name.
const MaxNameLen = 190

// parseName checks the optional record name: one or more labels of a-z 0-9
// hyphen and underscore (underscore for _service._proto names), lowercased.
// Wildcards are refused: one record would then answer for every name below
// the hostname, including names the service itself serves.
func parseName(p *string) (string, error) {
	if p == nil || *p == "" {
		return "", nil
	}
	name := labels.Lower(*p)
	if len(name) > MaxNameLen {
		return "", apierror.BadRequest("name must be at most %d bytes, got %d", MaxNameLen, len(name))
	}
	if name[0] == '.' || name[len(name)-1] == '.' {
		return "", apierror.BadRequest("name must be relative to the hostname: no leading or trailing dot")
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" {
			return "", apierror.BadRequest("name must not have empty labels (two dots in a row)")
		}
		if len(l) > 63 {
			return "", apierror.BadRequest("name: each label must be at most 63 bytes, %q is %d", l, len(l))
		}
		if strings.Contains(l, "*") {
			return "", apierror.BadRequest("name must not hold a wildcard (*)")
		}
		for _, c := range l {
			if !labels.Char(c, true) {
				return "", apierror.BadRequest("name may hold only a-z, 0-9, hyphens and underscores, found %q", c)
			}
		}
		if l == ChallengeLabel {
			return "", apierror.BadRequest("name: %s is reserved for DNS-01 challenges", ChallengeLabel)
		}
	}
	return name, nil
}

// parseHost checks a target or exchange: "." (the root, meaning "none") or a
// host name, returned lowercase without trailing dot. Host names are letters,
// digits and hyphens (RFC 1123), at least two labels, and not an IP address:
// these fields name hosts to look up, and a bare label or address there is a
// caller's mistake DNS would silently keep.
func parseHost(field string, p *string) (string, error) {
	if p == nil || *p == "" {
		return "", apierror.BadRequest("%s is required: a host name, or \".\" for none", field)
	}
	if *p == "." {
		return ".", nil
	}
	h := strings.TrimSuffix(labels.Lower(*p), ".")
	if len(h) > 253 {
		return "", apierror.BadRequest("%s must be at most 253 bytes, got %d", field, len(h))
	}
	ls := strings.Split(h, ".")
	if len(ls) < 2 {
		return "", apierror.BadRequest("%s must be a fully qualified host name such as mail.example.org, got %q", field, *p)
	}
	for _, l := range ls {
		if err := labels.LDH(l); err != nil {
			return "", apierror.BadRequest("%s must be a host name: each label %s, in %q", field, err, *p)
		}
	}
	if strings.Trim(ls[len(ls)-1], "0123456789") == "" {
		return "", apierror.BadRequest("%s must be a host name, not an IP address", field)
	}
	return h, nil
}

// fqdn writes a host name of Data as the RR wants it.
func fqdn(h string) string {
	if h == "." {
		return "."
	}
	return h + "."
}
