package chain

import (
	"strings"

	"github.com/miekg/dns"
)

// Compare orders two domain names canonically (RFC 4034 6.1): label by
// label from the root, each label as lowercase octets, a shorter label
// (or name) first when one is a prefix of the other. -1, 0 or 1. Names
// are in presentation form; those with escapes (\. \DDD) are compared in
// wire form, the rest without allocating.
func Compare(a, b string) int {
	ra, rb := strings.TrimSuffix(a, "."), strings.TrimSuffix(b, ".")
	for {
		switch {
		case ra == "" && rb == "":
			return 0
		case ra == "":
			return -1
		case rb == "":
			return 1
		}
		var la, lb string
		var escaped bool
		// A sort compares each pair once: the escape check rides the
		// search for the label, not a pass of its own over the names.
		if ra, la, escaped = lastLabel(ra); escaped {
			return compareWire(a, b)
		}
		if rb, lb, escaped = lastLabel(rb); escaped {
			return compareWire(a, b)
		}
		if c := compareFold(la, lb); c != 0 {
			return c
		}
	}
}

// lastLabel splits name (no trailing dot) into what is left and its last
// label; escaped is true when the label holds an escape (the dot found
// may not end it).
func lastLabel(name string) (rest, label string, escaped bool) {
	for i := len(name) - 1; i >= 0; i-- {
		switch name[i] {
		case '.':
			if i > 0 && name[i-1] == '\\' { // an escaped dot, within a label
				return "", "", true
			}
			return name[:i], name[i+1:], false
		case '\\':
			return "", "", true
		}
	}
	return "", name, false
}

// compareFold compares two labels as octets with ASCII letters lowercased.
func compareFold(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := lower(a[i]), lower(b[i])
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareWire compares names with escapes through their wire form's
// labels.
func compareWire(a, b string) int {
	la, lb := wireLabels(a), wireLabels(b)
	for i, j := len(la)-1, len(lb)-1; ; i, j = i-1, j-1 {
		switch {
		case i < 0 && j < 0:
			return 0
		case i < 0:
			return -1
		case j < 0:
			return 1
		}
		if c := compareFold(la[i], lb[j]); c != 0 {
			return c
		}
	}
}

// wireLabels are name's labels as octets, leftmost first; a name that
// does not pack is taken as one label of its text.
func wireLabels(name string) []string {
	buf := make([]byte, 256)
	end, err := dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
	if err != nil {
		return []string{name}
	}
	var out []string
	for off := 0; off < end && buf[off] != 0; off += int(buf[off]) + 1 {
		out = append(out, string(buf[off+1:off+1+int(buf[off])]))
	}
	return out
}
