package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The dashboard in headless Chromium (Debian's chromium, driven by
// playwright-core): e2e/browser/dashboard.mjs walks an operator and a team
// member through it against a real server (a TSIG key made there is used
// by nsupdate) and leaves screenshots of the main pages in
// e2e/browser/screenshots.
func TestDashboardInBrowser(t *testing.T) {
	s := start(t, options{profile: 2, extra: []string{certKeyFile(t), "dynamic_update"}})
	browse(t, s, "dashboard.mjs")
}

// The operator's view in headless Chromium: e2e/browser/operator.mjs
// enables DNSSEC, sets a CAA policy, suspends, restores and terminates a
// team's hostnames and revokes a team's key against a real server. The
// server has a cert_encryption_key_file: without one DNSSEC cannot be enabled.
func TestDashboardOperatorInBrowser(t *testing.T) {
	s := start(t, options{profile: 2, extra: []string{certKeyFile(t)}})
	browse(t, s, "operator.mjs")
}

// browse runs one of e2e/browser's scripts against s and fails the test if
// it fails. The script gets the API's URL, the admin token, the DNS address
// (to check what DNS answers after an action), Chromium and where to leave
// screenshots.
func browse(t *testing.T, s *server, script string) {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	for _, need := range []string{chromium, "browser/node_modules/playwright-core"} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("%v: run scripts/test-deps.sh (it installs chromium and runs npm ci in e2e/browser)", err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v: run scripts/test-deps.sh", err)
	}
	shots, err := filepath.Abs("browser/screenshots")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = "browser"
	cmd.Env = append(os.Environ(), "HOSTMINT_URL="+s.api, "HOSTMINT_ADMIN="+s.admin, "SCREENSHOTS="+shots, "CHROMIUM="+chromium,
		"HOSTMINT_DNS="+s.dnsAddr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
}
