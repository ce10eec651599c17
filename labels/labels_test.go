package labels

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSyntax(t *testing.T) {
	tests := []struct {
		label string
		ok    bool
	}{
		{"abc", true},
		{"my-host-1", true},
		{"a1b", true},
		{"xn--bcher-kva", true}, // spec syntax; [P1] refuses it as impersonating (Punycode)
		{"ab", false},
		{"-abc", false},
		{"abc-", false},
		{"ABC", false},
		{"a.b.c", false},
		{"a_bc", false},
		{"ab--c", true},
		{string(make([]byte, 64)), false},
		{"a" + string(repeat('b', 62)), true},
		{"a" + string(repeat('b', 63)), false},
	}
	for _, tc := range tests {
		if err := Syntax(tc.label); (err == nil) != tc.ok {
			t.Errorf("Syntax(%q) = %v, want ok=%v", tc.label, err, tc.ok)
		}
	}
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestBlocked(t *testing.T) {
	p := Default()
	tests := []struct {
		label   string
		blocked bool
	}{
		{"www", true},
		{"admin", true},
		{"login", true},
		{"ns1", true},
		{"paypal", true},
		{"paypa1-login", true},
		{"secure-g00gle", true},
		{"pay-pal-help", true},
		{"my-laptop", false},
		{"pineapple", false},
		{"wwwx", false},
	}
	for _, tc := range tests {
		if got := p.Blocked(tc.label); got != tc.blocked {
			t.Errorf("Blocked(%q) = %v, want %v", tc.label, got, tc.blocked)
		}
	}
}

func TestLoadOperatorList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.txt")
	os.WriteFile(path, []byte("# mine\nfoo-bar\n*acme*\n"), 0o600)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]bool{"foo-bar": true, "my-4cme-box": true, "www": true, "foobar": false} {
		if got := p.Blocked(label); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", label, got, want)
		}
	}
	os.WriteFile(path, []byte("two words\n"), 0o600)
	if _, err := Load(path); err == nil {
		t.Error("a line with a space should be refused")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file should be an error")
	}
}

func TestOpaque(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		l := Opaque()
		if err := Syntax(l); err != nil {
			t.Fatalf("Opaque() = %q: %v", l, err)
		}
		if l[0] < 'a' || l[0] > 'z' {
			t.Fatalf("Opaque() = %q does not start with a letter", l)
		}
		if seen[l] {
			t.Fatalf("Opaque() repeated %q", l)
		}
		seen[l] = true
	}
}

func TestPunycode(t *testing.T) {
	for label, want := range map[string]bool{"xn--bcher-kva": true, "xn--abc": true, "ab--c": false, "xnabc": false, "axn--b": false} {
		if got := Punycode(label); got != want {
			t.Errorf("Punycode(%q) = %v, want %v", label, got, want)
		}
	}
}

func TestLDH(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"a", true}, {"mail", true}, {"a-b", true}, {"xn--bcher-kva", true}, {strings.Repeat("a", 63), true},
		{"", false}, {strings.Repeat("a", 64), false}, {"-a", false}, {"a-", false},
		{"A", false}, {"a_b", false}, {"a.b", false}, {"ü", false}, {"a b", false},
	} {
		if err := LDH(tc.label); (err == nil) != tc.ok {
			t.Errorf("LDH(%q) = %v, want ok %v", tc.label, err, tc.ok)
		}
	}
	for _, c := range "az09-" {
		if !Char(c, false) || !Char(c, true) {
			t.Errorf("Char(%q) refused", c)
		}
	}
	if Char('_', false) || !Char('_', true) {
		t.Errorf("an underscore must stand only where underscore is asked for")
	}
	if Char('A', true) || Char('.', true) {
		t.Errorf("Char takes upper case or a dot")
	}
}
