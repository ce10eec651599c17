package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Usage mistakes are refused with exit 2 before anything is opened or
// written; the copy itself is tested end to end in e2e (TestMigrateCLI).
func TestRunRefuses(t *testing.T) {
	missing := "sqlite:" + filepath.Join(t.TempDir(), "missing.db")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"migrate"}, 2, "-from and -to are required"},
		{[]string{"migrate", "-from", "sqlite:a.db"}, 2, "-from and -to are required"},
		{[]string{"migrate", "-from", "sqlite:a.db", "-to", "mysql://x"}, 2, "want sqlite:PATH or postgres://"},
		{[]string{"migrate", "-from", missing, "-to", "sqlite:" + filepath.Join(t.TempDir(), "b.db")}, 1, "no such file"},
		{[]string{"backup", "-from", "postgres://x/y", "-to", "f"}, 2, "pg_dump"},
		{[]string{"backup", "-from", missing, "-to", "f"}, 1, "no such file"},
		{[]string{"help"}, 0, "usage"},
		{[]string{"-h"}, 0, "usage"},
		{[]string{"-frob"}, 2, "flag provided but not defined"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), tc.args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, out.String())
			}
		})
	}
}

func TestParseStore(t *testing.T) {
	for _, tc := range []struct {
		in, dialect, dsn string
		err              bool
	}{
		{"sqlite:data/hostmint.db", "sqlite", "data/hostmint.db", false},
		{"postgres://u@h:5432/db?sslmode=disable", "postgres", "postgres://u@h:5432/db?sslmode=disable", false},
		{"postgresql://u@h/db", "postgres", "postgresql://u@h/db", false},
		{"sqlite:", "", "", true},
		{"data/hostmint.db", "", "", true},
	} {
		d, dsn, err := parseStore(tc.in)
		if string(d) != tc.dialect || dsn != tc.dsn || (err != nil) != tc.err {
			t.Errorf("parseStore(%q) = %q, %q, %v", tc.in, d, dsn, err)
		}
	}
}
