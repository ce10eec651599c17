package domains

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/labels"
	"github.com/miekg/dns"
)

// normalizeSeeds are domain names as an operator or a caller writes them,
// and text that only looks like one.
var normalizeSeeds = []string{
	"example.org", "Example.ORG.", " dyn.example.test ", "org", ".", "", "..", "a..b", "-a.org", "a-.org",
	"a_b.org", "xn--bcher-kva.example", "1.2.3.4", strings.Repeat("a", 64) + ".org", strings.Repeat("a.", 100) + "org",
	`a\.b.org`, `a\046b.org`, "a b.org", "\u212aelvin.org", "ex\u0130mple.org", "exa\u00admple.org", "a.org.\u00a0",
	"\x00.org", "*.example.org", "example.org..",
}

// FuzzNormalize checks that a name Normalize accepts is one DNS can carry:
// lowercase ASCII labels of a-z 0-9 and inner hyphens, two or more, no
// trailing dot, and that it is only the input with its case folded.
func FuzzNormalize(f *testing.F) {
	for _, s := range normalizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n := Normalize(name)
		if n == "" {
			return
		}
		// Only ASCII case folding: strings.ToLower also maps some non-ASCII
		// runes (the Kelvin sign) onto a-z, turning text that is no domain
		// name into one.
		folded := strings.TrimSuffix(labels.Lower(strings.TrimSpace(name)), ".")
		if n != folded {
			t.Fatalf("Normalize(%q) = %q; the input folded to ASCII lowercase is %q", name, n, folded)
		}
		if Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q", name, n, n, Normalize(n))
		}
		labels := strings.Split(n, ".")
		if len(labels) < 2 || len(n) > 200 {
			t.Fatalf("Normalize(%q) = %q: %d labels, %d bytes", name, n, len(labels), len(n))
		}
		for _, l := range labels {
			if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				t.Fatalf("Normalize(%q) = %q: label %q", name, n, l)
			}
		}
		buf := make([]byte, 256)
		if _, err := dns.PackDomainName(n+".", buf, 0, nil, false); err != nil {
			t.Fatalf("Normalize(%q) = %q, which does not pack: %v", name, n, err)
		}
	})
}

// caaSeeds are CAA policy entries, valid and in every way broken.
var caaSeeds = []string{
	`0 issue "letsencrypt.org"`, `128 iodef "mailto:sec@example.org"`, `0 issuewild ";"`, `0 issue letsencrypt.org`,
	`0 tbs "x"`, `256 issue "x"`, `0 issue "a\"b"`, `0 issue "a\\b"`, `0 issue "\000"`, `0 issue "ca; account=1"`,
	`0 issue "x" ; comment`, `0 issue "x" "y"`, "0 issue \"x\"\n1 issue \"y\"", `0 issue "ünï"`, `0 issue (`, `0 issue "`,
	`0 issue "a" extra`, `$ORIGIN x.`, `0 Issue "x"`, "",
}

// FuzzParseCAA checks one entry of a domain's CAA policy: a refusal is a 400,
// and an accepted entry must be read back by the DNS plugin, which builds
// `NAME 300 IN CAA <entry>` with dns.NewRR and drops what fails: a policy the
// API accepted but DNS silently does not serve lets every CA issue.
func FuzzParseCAA(f *testing.F) {
	for _, s := range caaSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		stored, err := ParseCAA([]string{entry})
		if err != nil {
			if p, ok := apierror.As(err); !ok || httperr.Status(p.Code) != http.StatusBadRequest {
				t.Fatalf("ParseCAA(%q) = %v; want a 400 problem", entry, err)
			}
			return
		}
		var norm []string
		if err := json.Unmarshal([]byte(stored), &norm); err != nil || len(norm) != 1 {
			t.Fatalf("ParseCAA(%q) stored %s: %v", entry, stored, err)
		}
		// As plugin/hostname's loadZones reads it.
		rr, err := dns.NewRR("example.org. 300 IN CAA " + norm[0])
		if err != nil || rr == nil {
			t.Fatalf("ParseCAA(%q) stored %q, which DNS cannot read back: %v", entry, norm[0], err)
		}
		caa := rr.(*dns.CAA)
		if caa.Tag != "issue" && caa.Tag != "issuewild" && caa.Tag != "iodef" {
			t.Fatalf("ParseCAA(%q) stored tag %q", entry, caa.Tag)
		}
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeCAA)
		m.Answer = []dns.RR{rr}
		if _, err := m.Pack(); err != nil {
			t.Fatalf("ParseCAA(%q) stored %q, which does not pack: %v", entry, norm[0], err)
		}
		if again, err := ParseCAA(norm); err != nil || again != stored {
			t.Fatalf("ParseCAA(%q) stored %s; parsing that again gives %s, %v", entry, stored, again, err)
		}
	})
}
