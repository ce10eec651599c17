package records

import (
	"strings"

	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/problem"
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
		return "", problem.BadRequest("name must be at most %d bytes, got %d", MaxNameLen, len(name))
	}
	if name[0] == '.' || name[len(name)-1] == '.' {
		return "", problem.BadRequest("name must be relative to the hostname: no leading or trailing dot")
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" {
			return "", problem.BadRequest("name must not have empty labels (two dots in a row)")
		}
		if len(l) > 63 {
			return "", problem.BadRequest("name: each label must be at most 63 bytes, %q is %d", l, len(l))
		}
		if strings.Contains(l, "*") {
			return "", problem.BadRequest("name must not hold a wildcard (*)")
		}
		for _, c := range l {
			if !labels.Char(c, true) {
				return "", problem.BadRequest("name may hold only a-z, 0-9, hyphens and underscores, found %q", c)
			}
		}
		if l == ChallengeLabel {
			return "", problem.BadRequest("name: %s is reserved for DNS-01 challenges", ChallengeLabel)
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
		return "", problem.BadRequest("%s is required: a host name, or \".\" for none", field)
	}
	if *p == "." {
		return ".", nil
	}
	h := strings.TrimSuffix(labels.Lower(*p), ".")
	if len(h) > 253 {
		return "", problem.BadRequest("%s must be at most 253 bytes, got %d", field, len(h))
	}
	ls := strings.Split(h, ".")
	if len(ls) < 2 {
		return "", problem.BadRequest("%s must be a fully qualified host name such as mail.example.org, got %q", field, *p)
	}
	for _, l := range ls {
		if err := labels.LDH(l); err != nil {
			return "", problem.BadRequest("%s must be a host name: each label %s, in %q", field, err, *p)
		}
	}
	if strings.Trim(ls[len(ls)-1], "0123456789") == "" {
		return "", problem.BadRequest("%s must be a host name, not an IP address", field)
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
