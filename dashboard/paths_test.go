package dashboard

import (
	"strings"
	"testing"
)

// The sign-in link the API hands out (accounts.SigninURL) opens a page of
// the dashboard.
func TestSigninLinkUnderPrefix(t *testing.T) {
	if !strings.HasPrefix(signinLinkPath, Prefix) {
		t.Errorf("sign-in links open %s, outside the dashboard's %s", signinLinkPath, Prefix)
	}
}
