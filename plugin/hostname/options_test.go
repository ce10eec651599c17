package hostname

import (
	"os"
	"slices"
	"strings"
	"testing"
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
		want = append(want, o.name+" "+o.syntax)
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
