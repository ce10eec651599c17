package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// An operator's dashboard session lasts only as long as the admin token
// that started it: a restart keeps it, a rotated token ends it (the
// operator signs in again with the new one), and the old token is refused.
func TestOperatorSessionEndsWithToken(t *testing.T) {
	dir := t.TempDir()
	s := start(t, options{profile: 2, dir: dir})
	old := s.admin
	b := s.dashboard()
	b.signIn(t, "/dashboard/signin", old)

	s.stop()
	s = start(t, options{profile: 2, dir: dir})
	b.s = s
	if status, _, _ := b.send(t, "/dashboard/operator", nil); status != http.StatusOK {
		t.Fatalf("after a restart with the same token the operator page answered %d", status)
	}

	s.stop()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("a-rotated-admin-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = start(t, options{profile: 2, dir: dir})
	b.s = s
	if status, loc, _ := b.send(t, "/dashboard/operator", nil); status != http.StatusSeeOther || loc != "/dashboard/signin" {
		t.Fatalf("after the token was rotated the old session got %d to %q, want 303 to sign in", status, loc)
	}
	if r := s.do("GET", "/api/admin/domains", old, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("the old token on the API: %d", r.status)
	}
	b.signIn(t, "/dashboard/signin", s.admin)
	if status, _, _ := b.send(t, "/dashboard/operator", nil); status != http.StatusOK {
		t.Fatalf("signed in with the new token, the operator page answered %d", status)
	}
}
