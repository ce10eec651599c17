// Package labels holds the rules for the left-most label of a hostname: its
// syntax, the terms nobody may register (reserved, blocked and impersonating
// ones), and the generation of opaque labels. It knows nothing of accounts,
// plans or storage.
package labels

import (
	"bufio"
	"crypto/rand"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
)

// Label length limits of the spec.
const (
	MinLen = 3
	MaxLen = 63
)

// Syntax checks the spec's label syntax: 3-63 of a-z 0-9 and hyphen, no
// leading or trailing hyphen. The label must already be lowercase.
func Syntax(label string) error {
	if n := len(label); n < MinLen || n > MaxLen {
		return fmt.Errorf("must be %d to %d characters long, got %d", MinLen, MaxLen, n)
	}
	return LDH(label)
}

// LDH checks one label of a host name (RFC 1123): 1 to 63 lowercase
// letters, digits and hyphens, neither first nor last a hyphen. Every
// host name the service takes (hostnames, domains, record targets) is
// made of such labels.
func LDH(label string) error {
	if n := len(label); n < 1 || n > MaxLen {
		return fmt.Errorf("must be 1 to %d characters long, got %d", MaxLen, n)
	}
	// By rune, so that the message names the character sent ('ü', not the
	// first byte of its UTF-8 read as 'Ã').
	for _, c := range label {
		if !Char(c, false) {
			return fmt.Errorf("may hold only lowercase letters, digits and hyphens, found %q", c)
		}
	}
	if label[0] == '-' || label[len(label)-1] == '-' {
		return fmt.Errorf("must not start or end with a hyphen")
	}
	return nil
}

// Char reports whether c may stand in a label: a lowercase letter, a
// digit or a hyphen, and with underscore also '_' (the _service._proto
// names records are published under).
func Char(c rune, underscore bool) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || underscore && c == '_'
}

// Punycode reports whether label is an internationalised name's ASCII form
// (RFC 5891's "xn--" A-label), which a browser may show in another script,
// as a look-alike of a name it is not.
func Punycode(label string) bool { return strings.HasPrefix(label, "xn--") }

//go:embed blocked.txt
var shipped string

// Policy is the set of terms no one may register as a label.
type Policy struct {
	exact    map[string]bool
	contains []string // matched after folding look-alike characters
}

// Default is the policy of the shipped list alone.
func Default() *Policy {
	p, err := parse(strings.NewReader(shipped), nil)
	if err != nil {
		panic("labels: shipped list: " + err.Error())
	}
	return p
}

// Load returns the shipped list plus an operator's own list file. The file
// has one term a line: a plain term blocks that exact label; "*term*" blocks
// every label that contains it, also when spelt with look-alike digits or
// hyphens (paypa1-login contains paypal). Blank lines and # comments are skipped.
func Load(path string) (*Policy, error) {
	p := Default()
	if path == "" {
		return p, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := parse(f, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func parse(r io.Reader, into *Policy) (*Policy, error) {
	p := into
	if p == nil {
		p = &Policy{exact: map[string]bool{}}
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		line = Lower(line)
		if strings.HasPrefix(line, "*") && strings.HasSuffix(line, "*") && len(line) > 2 {
			p.contains = append(p.contains, fold(line[1:len(line)-1]))
			continue
		}
		if strings.ContainsAny(line, "* \t") {
			return nil, fmt.Errorf("line %d: %q is neither a term nor *term*", n, line)
		}
		p.exact[line] = true
	}
	return p, sc.Err()
}

// Blocked reports whether label is a reserved, blocked or impersonating term.
func (p *Policy) Blocked(label string) bool {
	if p.exact[label] {
		return true
	}
	f := fold(label)
	for _, t := range p.contains {
		if strings.Contains(f, t) {
			return true
		}
	}
	return false
}

// fold maps look-alike digits to the letters they imitate and drops hyphens,
// so that "g00gle" and "pay-pal" meet "google" and "paypal".
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '-':
			continue
		case '0':
			c = 'o'
		case '1':
			c = 'l'
		case '3':
			c = 'e'
		case '4':
			c = 'a'
		case '5':
			c = 's'
		case '7':
			c = 't'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// opaqueAlphabet avoids look-alikes (0/o, 1/l) so a label read aloud survives.
const opaqueAlphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// OpaqueLen is the length of a generated label: 32^10 = 2^50 names.
const OpaqueLen = 10

// Opaque returns a random label that passes Syntax and starts with a letter.
func Opaque() string {
	var b [OpaqueLen]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = opaqueAlphabet[int(b[i])%len(opaqueAlphabet)]
	}
	if b[0] >= '2' && b[0] <= '9' {
		b[0] = opaqueAlphabet[int(b[0]-'2')]
	}
	return string(b[:])
}

// Lower lowercases A-Z only. strings.ToLower also folds some non-ASCII runes
// into ASCII letters (the Kelvin sign into k, U+0130 into i), which would
// pass text that is not a DNS name off as one.
func Lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
