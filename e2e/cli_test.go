package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// operatorShell runs the hostmint command as an operator would, in a
// directory laid out as `make run` leaves it (./data/admin.token), with
// only HOSTMINT_SERVER set, since the test's server listens on a port of its own.
type operatorShell struct {
	t   *testing.T
	dir string
	env []string
}

func newOperatorShell(t *testing.T, s *server) *operatorShell {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(s.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "admin.token"), tok, 0o600); err != nil {
		t.Fatal(err)
	}
	return &operatorShell{t: t, dir: dir, env: []string{"HOSTMINT_SERVER=" + s.api}}
}

// run runs hostmint with args and extra environment; it returns the exit
// code, stdout and stderr.
func (o *operatorShell) run(extraEnv []string, args ...string) (int, string, string) {
	o.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cli(o.t), args...)
	cmd.Dir = o.dir
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, o.env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		o.t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// ok runs a command that must succeed, and returns what it printed.
func (o *operatorShell) ok(args ...string) string {
	o.t.Helper()
	code, out, errOut := o.run(nil, args...)
	if code != 0 {
		o.t.Fatalf("hostmint %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// json runs a command with -json and decodes what it printed.
func (o *operatorShell) json(args ...string) map[string]any {
	o.t.Helper()
	var v map[string]any
	out := o.ok(append(args, "-json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		o.t.Fatalf("hostmint %s -json printed no JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// refused runs a command that the API or the command must refuse with
// exit code, printing want.
func (o *operatorShell) refused(env []string, code int, want string, args ...string) {
	o.t.Helper()
	got, out, errOut := o.run(env, args...)
	if got != code || !strings.Contains(errOut, want) {
		o.t.Errorf("hostmint %s: exit %d, stderr %q (stdout %q); want exit %d with %q", strings.Join(args, " "), got, errOut, out, code, want)
	}
}

// The hostmint command, run as a process against a running server, on
// both stores: every operator command, its tables and -json, and its
// refusals.
func TestOperatorCLI(t *testing.T) {
	eachDialect(t, options{extra: []string{certKeyFile(t)}}, func(t *testing.T, s *server) {
		sh := newOperatorShell(t, s)
		if out := sh.ok("health"); strings.TrimSpace(out) != "ok" {
			t.Fatalf("health: %q", out)
		}

		out := sh.ok("accounts", "create", "Acme Ltd", "--plan", "pro")
		if !strings.Contains(out, "Acme Ltd") || !strings.Contains(out, "pro") {
			t.Fatalf("accounts create printed %q", out)
		}
		beta := sh.json("accounts", "create", "Beta", "--plan", "free", "--cap", "3")
		id := beta["id"].(string)
		if beta["cap"] != float64(3) {
			t.Fatalf("created %v", beta)
		}
		out = sh.ok("accounts", "list")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
			!strings.Contains(lines[1], "Beta") || !strings.Contains(lines[2], "Acme Ltd") {
			t.Fatalf("accounts list (newest first) printed\n%s", out)
		}
		// A page at a time: the last line says how to ask for the next.
		out = sh.ok("accounts", "list", "--limit", "1")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		more, ok := strings.CutPrefix(lines[len(lines)-1], "more: hostmint ")
		if !ok || !strings.Contains(out, "Beta") || strings.Contains(out, "Acme Ltd") {
			t.Fatalf("accounts list --limit 1 printed\n%s", out)
		}
		if out := sh.ok(strings.Fields(more)...); !strings.Contains(out, "Acme Ltd") || strings.Contains(out, "more:") {
			t.Fatalf("%s printed\n%s", more, out)
		}
		if l := sh.json("accounts", "list", "--name", "Beta"); len(l["accounts"].([]any)) != 1 {
			t.Fatalf("accounts list --name Beta: %v", l)
		}
		if out := sh.ok("accounts", "show", id); !strings.Contains(out, "status") || !strings.Contains(out, "active") {
			t.Fatalf("accounts show: %s", out)
		}

		out = sh.ok("keys", "create", id, "--name", "ci")
		key := ""
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "svc_") {
				key = f
			}
		}
		if key == "" || !strings.Contains(out, "only time") {
			t.Fatalf("keys create printed %q", out)
		}
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.30"})
		if out := sh.ok("keys", "list", id); !strings.Contains(out, "ci") || strings.Contains(out, key) {
			t.Fatalf("keys list: %s", out)
		}
		if out := sh.ok("tsig-keys", "create", id, "--name", "router"); !strings.Contains(out, "secret:") || !strings.Contains(out, "hmac-sha256") {
			t.Fatalf("tsig-keys create: %s", out)
		}

		if out := sh.ok("domains", "list"); !strings.Contains(out, "example.org") {
			t.Fatalf("domains list: %s", out)
		}
		sh.ok("domains", "add", "more.example.net")
		sh.refused(nil, 2, "(CONFLICT)", "domains", "add", "more.example.net")

		for _, q := range []string{h.str("hostname"), strings.ToUpper(h.str("hostname")) + ".", "198.41.0.30"} {
			if out := sh.ok("hostnames", "find", q); !strings.Contains(out, h.str("id")) || !strings.Contains(out, id) {
				t.Errorf("hostnames find %s: %s", q, out)
			}
		}
		if l := sh.json("hostnames", "find", "--account", id); len(l["hostnames"].([]any)) != 1 {
			t.Errorf("hostnames find --account: %v", l)
		}

		if a := sh.json("accounts", "suspend", id); a["status"] != "suspended" {
			t.Errorf("suspend: %v", a)
		}
		if a := sh.json("accounts", "restore", id); a["status"] != "active" {
			t.Errorf("restore: %v", a)
		}
		if out := sh.ok("accounts", "close", id); !strings.Contains(out, "is closed: 1 hostnames released, 1 API keys and 1 TSIG keys revoked") {
			t.Errorf("close: %s", out)
		}
		s.must(401, "GET", "/api/v1/hostnames", key, nil)
		sh.refused(nil, 2, "is closed (CONFLICT)", "accounts", "restore", id)
		if out := sh.ok("audit", "--action", "DELETE /api/admin/accounts/{id}"); !strings.Contains(out, "account:"+id) {
			t.Errorf("audit: %s", out)
		}

		// Refusals and mistakes: the API's words and code, a non-zero exit.
		sh.refused(nil, 2, "plan is required (BAD_REQUEST)", "accounts", "create", "Gamma")
		sh.refused(nil, 2, "Account not found (NOT_FOUND)", "accounts", "show", "acc_none")
		sh.refused(nil, 2, "usage: hostmint accounts show ID", "accounts", "show")
		sh.refused(nil, 2, `unknown command "frob"`, "accounts", "frob")
		sh.refused([]string{"HOSTMINT_TOKEN=wrong-token-wrong-token"}, 2, "refused the admin token", "accounts", "list")
		sh.refused([]string{"HOSTMINT_SERVER=http://127.0.0.1:1"}, 1, "cannot reach the server", "accounts", "list")
		sh.refused(nil, 2, "no admin token", "-token-file", filepath.Join(sh.dir, "missing"), "accounts", "list")
		// The flags instead of the environment, before the command.
		if code, out, _ := sh.run([]string{"HOSTMINT_SERVER=http://127.0.0.1:1"}, "-server", s.api,
			"-token-file", filepath.Join(s.dir, "admin.token"), "accounts", "list"); code != 0 || !strings.Contains(out, "Acme Ltd") {
			t.Errorf("with -server and -token-file: exit %d\n%s", code, out)
		}
	})
}
