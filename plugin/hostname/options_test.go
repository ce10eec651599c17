package hostname

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// The README's Syntax block and its list of options are the options table,
// in its order: a new option cannot go undocumented, nor a documented one
// unparsed.
func TestREADMESyntax(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "~~~ txt\nhostname {\n")
	end := strings.Index(readme[start:], "}\n~~~")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no ~~~ txt hostname { ... } ~~~ Syntax block")
	}
	var got []string
	for _, line := range strings.Split(readme[start+len("~~~ txt\nhostname {\n"):start+end], "\n") {
		if line = strings.TrimSpace(line); line != "" {
			got = append(got, line)
		}
	}
	var want []string
	for _, o := range options {
		want = append(want, strings.TrimSpace(o.name+" "+o.syntax))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's Syntax block:\n%s\nthe options table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	described := readme[start+end:]
	for _, o := range options {
		if !strings.Contains(described, "`"+o.name+"`") {
			t.Errorf("README.md does not describe option %s (`%s` below the Syntax block)", o.name, o.name)
		}
	}
}

// An option with too few arguments is refused with its syntax and what it
// is for, and the file position caddy adds.
func TestOptionArgumentErrors(t *testing.T) {
	t.Parallel()
	for _, o := range options {
		if o.doc == "" {
			t.Errorf("option %s has no doc line", o.name)
		}
		if o.min == 0 {
			continue // a flag: nothing is missing without arguments
		}
		c := caddy.NewTestController("dns", block(minimal+o.name+"\n"))
		_, err := parse(c)
		if err == nil || !strings.Contains(err.Error(), o.syntax) || !strings.Contains(err.Error(), o.doc) {
			t.Errorf("%s without arguments: %v, want its syntax and doc", o.name, err)
		}
	}
}
