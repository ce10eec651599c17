package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"acc_1":              "acc_1",
		"2001:db8::1":        "2001:db8::1",
		"Acme Ltd":           "'Acme Ltd'",
		"it's":               `'it'\''s'`,
		"":                   "''",
		"a.example.org":      "a.example.org",
		"$(rm -rf /)":        "'$(rm -rf /)'",
		"x;y":                "'x;y'",
		"DELETE /api/admin/": "'DELETE /api/admin/'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// Flags stand anywhere among the positional arguments, as an operator
// types them.
func TestParseInterleaved(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		plan string
		json bool
	}{
		{[]string{"Acme", "--plan", "pro"}, []string{"Acme"}, "pro", false},
		{[]string{"--plan", "pro", "Acme"}, []string{"Acme"}, "pro", false},
		{[]string{"Acme", "-json", "--plan=pro", "Other"}, []string{"Acme", "Other"}, "pro", true},
		{[]string{"Acme", "--", "-json"}, []string{"Acme", "-json"}, "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		plan := fs.String("plan", "", "")
		js := fs.Bool("json", false, "")
		pos, err := parseInterleaved(fs, tc.args)
		if err != nil || !slices.Equal(pos, tc.pos) || *plan != tc.plan || *js != tc.json {
			t.Errorf("%q: %q plan %q json %v err %v", tc.args, pos, *plan, *js, err)
		}
	}
}

// -token-file wins over HOSTMINT_TOKEN, which wins over the file that
// HOSTMINT_TOKEN_FILE (or the default) names.
func TestTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "admin.token")
	os.WriteFile(file, []byte("from-file\n"), 0o600)
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"HOSTMINT_TOKEN_FILE": file}, nil, "from-file"},
		{map[string]string{"HOSTMINT_TOKEN_FILE": file, "HOSTMINT_TOKEN": "from-env"}, nil, "from-env"},
		{map[string]string{"HOSTMINT_TOKEN": "from-env"}, []string{"-token-file", file}, "from-file"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Setenv("HOSTMINT_TOKEN", "")
			t.Setenv("HOSTMINT_TOKEN_FILE", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			g, _, err := parseGlobals(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := g.token(); got != tc.want || err != nil {
				t.Errorf("token %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
