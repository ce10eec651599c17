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
// member through it against a real server and leaves screenshots of the
// main pages in e2e/browser/screenshots.
func TestDashboardInBrowser(t *testing.T) {
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
	s := start(t, options{profile: 2})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Dir = "browser"
	cmd.Env = append(os.Environ(), "HOSTMINT_URL="+s.api, "HOSTMINT_ADMIN="+s.admin, "SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dashboard.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
