package labels

import (
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// specLabel is the spec's label syntax written independently of Syntax:
// 3-63 of a-z 0-9 and hyphen, a letter or digit at each end.
var specLabel = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

var syntaxSeeds = []string{
	"abc", "my-host-1", "a1b", "ab", "-abc", "abc-", "ABC", "a.b.c", "a_bc", "ab--c", "xn--bcher-kva",
	"abcd--", "a" + strings.Repeat("b", 62), "a" + strings.Repeat("b", 63), "", "\x00\x00\x00", "kelvin\u212a",
	"g00gle", "paypa1-login", "admin", "ns1", "héllo", "ab\u00adc",
}

// FuzzSyntax checks Syntax against the spec's regular expression and the
// IDNA rule, and that a label it accepts is a DNS label; Blocked must not
// panic on anything Syntax lets through or refuses.
func FuzzSyntax(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add(s)
	}
	policy := Default()
	f.Fuzz(func(t *testing.T, label string) {
		err := Syntax(label)
		want := specLabel.MatchString(label)
		if (err == nil) != want {
			t.Fatalf("Syntax(%q) = %v; want accepted = %v", label, err, want)
		}
		if err == nil {
			if _, ok := dns.IsDomainName(label + ".example.org."); !ok {
				t.Fatalf("Syntax accepted %q, which is not a DNS label", label)
			}
		}
		if policy.Blocked(label) != policy.Blocked(label) {
			t.Fatalf("Blocked(%q) is not stable", label)
		}
	})
}

// policySeeds are blocked_labels files: terms, patterns, comments, and
// lines the parser must refuse (one longer than bufio's 64 KiB token).
var policySeeds = []string{
	"", "# nothing\n", "evil\n*bank*\n", "*paypal*\n  Spaced  # comment\n", "**\n", "*\n", "*a*b*\n",
	"two words\n", "tab\there\n", "\x00\n", "*g00-gle*\n", "ünïcode\n", "a\r\nb\r\n", strings.Repeat("x", 70000),
}

// FuzzPolicy feeds arbitrary text as an operator's blocked_labels file: it
// is parsed or refused with an error, never a panic, and every term it holds
// then blocks itself.
func FuzzPolicy(f *testing.F) {
	for _, s := range policySeeds {
		f.Add(s, "paypa1-login")
	}
	f.Fuzz(func(t *testing.T, text, label string) {
		p, err := parse(strings.NewReader(text), nil)
		if err != nil {
			return
		}
		for term := range p.exact {
			if !p.Blocked(term) {
				t.Fatalf("exact term %q does not block itself", term)
			}
		}
		for _, term := range p.contains {
			if !p.Blocked(term) {
				t.Fatalf("contained term %q does not block itself", term)
			}
			if strings.Contains(fold(label), term) && !p.Blocked(label) {
				t.Fatalf("%q contains %q after folding but is not blocked", label, term)
			}
		}
	})
}
