package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// deploy/hostmint.service: systemd-analyze verify finds nothing wrong with
// it (its ExecStart pointed at the built binary, which verify wants to
// exist), it keeps the hardening docs/operations.md promises, and
// systemd-analyze security's exposure score is logged. No systemd needs to
// run: verify and security --offline read the file alone.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is not installed: scripts/test-deps.sh installs it (package systemd)")
	}
	unit, err := os.ReadFile("../deploy/hostmint.service")
	if err != nil {
		t.Fatal(err)
	}
	const execStart = "ExecStart=/usr/local/bin/coredns -conf /etc/hostmint/Corefile"
	if !strings.Contains(string(unit), "\n"+execStart+"\n") {
		t.Fatalf("deploy/hostmint.service does not run %q", execStart)
	}
	set := unitSettings(string(unit))
	for key, want := range map[string]string{
		"DynamicUser":             "yes",
		"User":                    "hostmint",
		"AmbientCapabilities":     "CAP_NET_BIND_SERVICE",
		"CapabilityBoundingSet":   "CAP_NET_BIND_SERVICE",
		"NoNewPrivileges":         "yes",
		"StateDirectory":          "hostmint",
		"WorkingDirectory":        "/var/lib/hostmint",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX AF_NETLINK",
		"SystemCallFilter":        "@system-service|~@privileged @resources",
		"UMask":                   "0077",
	} {
		if got := strings.Join(set[key], "|"); got != want {
			t.Errorf("deploy/hostmint.service: %s=%q, want %q", key, got, want)
		}
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "hostmint.service")
	edited := strings.Replace(string(unit), execStart, strings.Replace(execStart, "/usr/local/bin/coredns", binary(t), 1), 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Verify warns about unknown keys and bad values without failing.
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, "hostmint.service") {
			t.Errorf("systemd-analyze verify: %s", l)
		}
	}

	// The exposure score, for the log; not asserted (it moves with
	// systemd's version).
	out, err = exec.Command(analyze, "security", "--offline=yes", "--no-pager", path).CombinedOutput()
	if m := regexp.MustCompile(`Overall exposure level for \S+: (\S+ \S+)`).FindSubmatch(out); m != nil {
		t.Logf("systemd-analyze security: exposure %s", m[1])
	} else {
		t.Logf("systemd-analyze security gave no score (%v):\n%s", err, out)
	}
}

// deploy/Corefile.systemd serves as the unit runs it: a non-root user with
// CAP_NET_BIND_SERVICE as its only capability (ambient, as
// AmbientCapabilities gives it) and no new privileges binds port 53 in a
// network namespace where unprivileged ports start at 1024, and writes its
// token and key into its state directory. setpriv stands in for systemd;
// the state directory is a temporary one.
func TestSystemdCorefile(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatal("setpriv (util-linux) is not installed")
	}
	if os.Geteuid() != 0 {
		t.Fatal("TestSystemdCorefile needs root (a network namespace, setpriv to another user)")
	}
	text, err := os.ReadFile("../deploy/Corefile.systemd")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), ".:53 {") || !strings.Contains(string(text), "api 127.0.0.1:8080") {
		t.Fatalf("deploy/Corefile.systemd no longer serves DNS on 53 and the API on 127.0.0.1:8080:\n%s", text)
	}
	// A directory the service user may enter and own, as systemd makes
	// StateDirectory; the binary beside it (binary(t)'s directory is root's).
	base, err := os.MkdirTemp("", "hostmint-systemd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	state := filepath.Join(base, "state")
	const uid = 65534 // nobody, as a DynamicUser stands for
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(state, uid, uid)
	bin := filepath.Join(base, "coredns")
	b, err := os.ReadFile(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(base, "Corefile")
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(string(text), "/var/lib/hostmint", state)), 0o644); err != nil {
		t.Fatal(err)
	}

	ns := newImgNetns(t)
	cmd := exec.Command("ip", "netns", "exec", ns.name, setpriv,
		fmt.Sprintf("--reuid=%d", uid), fmt.Sprintf("--regid=%d", uid), "--clear-groups",
		"--inh-caps=-all,+net_bind_service", "--ambient-caps=+net_bind_service",
		"--bounding-set=-all,+net_bind_service", "--no-new-privs",
		bin, "-conf", conf)
	cmd.Dir = state
	log := &unitLog{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	api := &imgAPI{t: t, ns: ns, base: "http://127.0.0.1:8080"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := api.client().Get(api.base + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Corefile.systemd as the unit's user never became healthy (%v):\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, proto := range []string{"udp", "tcp"} {
		r, err := ns.query("dyn.example.test", dns.TypeSOA, proto, "127.0.0.1:53")
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Errorf("SOA dyn.example.test over %s on port 53: %v %v\n%s", proto, r, err, log.String())
		}
	}
	for _, f := range []string{"admin.token", "cert.key", "hostmint.db"} {
		st, err := os.Stat(filepath.Join(state, f))
		if err != nil {
			t.Errorf("the state directory lacks %s: %v", f, err)
			continue
		}
		if o := st.Sys().(*syscall.Stat_t).Uid; o != uid {
			t.Errorf("%s is owned by uid %d, want the service's %d", f, o, uid)
		}
		if f != "hostmint.db" && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}

// unitSettings are a unit file's KEY=VALUE lines, every value of a key in
// order.
func unitSettings(text string) map[string][]string {
	m := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' || l[0] == ';' || l[0] == '[' {
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok {
			m[strings.TrimSpace(k)] = append(m[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return m
}

// unitLog is the server's output, written and read from several goroutines.
type unitLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *unitLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *unitLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
