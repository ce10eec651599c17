package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
	"golang.org/x/sys/unix"
)

// The container image: the project's own Dockerfile, built unchanged by
// Debian's podman on stand-ins for its two base images
// (scripts/image-standins.sh; this machine pulls from no registry), and run
// as shipped: its own Corefile, its non-root user, no capability but
// NET_BIND_SERVICE, /data on a named volume (and a read-only root file
// system, no new privileges, as docs/operations.md runs it). DNS on 53 and
// the API on 8080 are asked from a network namespace of the test's own that
// has only loopback. Then the data outlives a restart, the admin CLI works
// through podman exec, and the image stays small. A second run mounts a
// Corefile with storage postgres over /etc/hostmint/Corefile
// (docs/operations.md, "Production deployment").
//
// Needs root and podman, runc and busybox-static (scripts/test-deps.sh);
// podman keeps everything of this test in a store of its own under a
// temporary directory, removed at the end with the namespace.
func TestImage(t *testing.T) {
	began := time.Now()
	pm := newImgPodman(t)
	image := "localhost/hostmint-e2e:" + imgRand(4)

	// The base images, then the Dockerfile as shipped. The host's module and
	// build caches are mounted where the builder's go command keeps them, so
	// that a build takes seconds rather than minutes; the Dockerfile is not
	// changed.
	step := time.Now()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", append([]string{filepath.Join(root, "scripts/image-standins.sh")}, pm.global...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/image-standins.sh: %v\n%s", err, out)
	}
	t.Logf("stand-in base images built in %s: %s", time.Since(step).Round(time.Second), strings.Fields(string(out)))
	step = time.Now()
	args := []string{"build", "--pull=never", "--network", "host", "-f", filepath.Join(root, "Dockerfile"), "-t", image}
	args = append(args, pm.ulimits...)
	for _, c := range []struct{ env, in string }{{"GOMODCACHE", "/go/pkg/mod"}, {"GOCACHE", "/root/.cache/go-build"}} {
		if dir := imgGoEnv(t, c.env); filepath.IsAbs(dir) {
			if err := os.MkdirAll(dir, 0o755); err == nil {
				args = append(args, "-v", dir+":"+c.in)
			}
		}
	}
	pm.must(append(args, root)...)
	t.Logf("image built in %s", time.Since(step).Round(time.Second))

	// What the image says of itself.
	var info []struct {
		Size   int64
		Config struct {
			User         string
			Env          []string
			Entrypoint   []string
			Cmd          []string
			ExposedPorts map[string]any
		}
	}
	if err := json.Unmarshal([]byte(pm.must("image", "inspect", image)), &info); err != nil || len(info) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	img := info[0]
	t.Logf("image size %.1f MB (%d bytes)", float64(img.Size)/1e6, img.Size)
	if img.Size <= 0 || img.Size >= 80e6 {
		t.Errorf("image size %d bytes, want under 80 MB", img.Size)
	}
	if img.Config.User != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (distroless nonroot)", img.Config.User)
	}
	if !imgHas(img.Config.Env, "HOSTMINT_TOKEN_FILE=/data/admin.token") {
		t.Errorf("image env %v lacks HOSTMINT_TOKEN_FILE=/data/admin.token", img.Config.Env)
	}
	if strings.Join(img.Config.Entrypoint, " ")+" "+strings.Join(img.Config.Cmd, " ") != "/coredns -conf /etc/hostmint/Corefile" {
		t.Errorf("image runs %v %v", img.Config.Entrypoint, img.Config.Cmd)
	}
	for _, p := range []string{"53/udp", "53/tcp", "8080/tcp"} {
		if _, ok := img.Config.ExposedPorts[p]; !ok {
			t.Errorf("image does not expose %s: %v", p, img.Config.ExposedPorts)
		}
	}

	// Without NET_BIND_SERVICE the non-root server cannot have port 53 (a
	// network namespace of its own starts unprivileged ports at 1024): the
	// one capability the image asks for is the one it needs.
	step = time.Now()
	denied := "hostmint-e2e-nocap-" + imgRand(4)
	code, out2 := pm.runFor(60*time.Second, append(append([]string{"run", "--name", denied, "--network", "none", "--cap-drop=all"}, pm.ulimits...), image)...)
	if code == 0 || !strings.Contains(out2, "permission denied") {
		t.Errorf("without NET_BIND_SERVICE: exit %d, want a refusal to bind port 53 (permission denied):\n%s", code, out2)
	}
	pm.run("rm", "-f", "-v", denied)
	t.Logf("without NET_BIND_SERVICE: exit %d in %s", code, time.Since(step).Round(100*time.Millisecond))

	// As shipped, in a namespace that has only loopback.
	ns := newImgNetns(t)
	vol := "hostmint-e2e-data-" + imgRand(4)
	pm.must("volume", "create", vol)
	name := "hostmint-e2e-" + imgRand(4)
	step = time.Now()
	pm.must(append(append([]string{"run", "-d", "--name", name,
		"--network", "ns:/run/netns/" + ns.name,
		"--cap-drop=all", "--cap-add=NET_BIND_SERVICE",
		"--read-only", "--security-opt=no-new-privileges",
		"-v", vol + ":/data"}, pm.ulimits...), image)...)
	api := &imgAPI{t: t, ns: ns, base: "http://127.0.0.1:8080"}
	api.waitHealthy(pm, name)
	t.Logf("container healthy in %s", time.Since(step).Round(100*time.Millisecond))

	// The server is the image's user, with NET_BIND_SERVICE its only
	// capability, effective and bounding.
	status := pm.processStatus(name)
	for field, want := range map[string]string{
		"Uid": "65532\t65532\t65532\t65532", "Gid": "65532\t65532\t65532\t65532",
		"CapEff": "0000000000000400", "CapBnd": "0000000000000400", "NoNewPrivs": "1",
	} {
		if status[field] != want {
			t.Errorf("server process %s: %q, want %q", field, status[field], want)
		}
	}

	// DNS on 53, UDP and TCP.
	checkSOA := func(when string) {
		t.Helper()
		for _, proto := range []string{"udp", "tcp"} {
			r, err := ns.query("dyn.example.test", dns.TypeSOA, proto, "127.0.0.1:53")
			if err != nil {
				t.Fatalf("%s: SOA dyn.example.test over %s to port 53: %v\n%s", when, proto, err, pm.logs(name))
			}
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) != 1 || r.Answer[0].Header().Rrtype != dns.TypeSOA ||
				r.Answer[0].Header().Name != "dyn.example.test." {
				t.Errorf("%s: SOA dyn.example.test over %s: %v", when, proto, r)
			}
		}
	}
	checkSOA("first start")

	// The admin token and the key, generated on the volume, the server's own.
	mount := strings.TrimSpace(pm.must("volume", "inspect", "--format", "{{.Mountpoint}}", vol))
	files := map[string][]byte{}
	for _, f := range []string{"admin.token", "cert.key", "hostmint.db"} {
		p := filepath.Join(mount, f)
		st, err := os.Stat(p)
		if err != nil {
			t.Errorf("the volume lacks %s: %v", f, err)
			continue
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 65532 {
			t.Errorf("%s on the volume is owned by uid %d, want 65532", f, sys.Uid)
		}
		if f != "hostmint.db" {
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s on the volume has mode %v, want 0600", f, st.Mode().Perm())
			}
			files[f], _ = os.ReadFile(p)
		}
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(files["cert.key"]))); err != nil || len(k) != 32 {
		t.Errorf("cert.key on the volume is not 32 bytes in base64 (%d bytes, %v)", len(k), err)
	}
	api.token = strings.TrimSpace(string(files["admin.token"]))
	if len(api.token) < 32 {
		t.Fatalf("admin token on the volume: %q", api.token)
	}

	// An account through the admin API, with the token from the volume.
	acct := "image team " + imgRand(3)
	code, body := api.do("POST", "/api/admin/accounts", map[string]any{"name": acct, "plan": "free"})
	if code != 201 {
		t.Fatalf("POST /api/admin/accounts: %d %s", code, body)
	}
	var created struct{ ID, Name, Plan string }
	json.Unmarshal(body, &created)
	if created.ID == "" {
		t.Fatalf("POST /api/admin/accounts: no id in %s", body)
	}

	// The CLI inside the container finds the server and the token by itself
	// (HOSTMINT_TOKEN_FILE in the image, HOSTMINT_SERVER's default).
	cliName := "cli team " + imgRand(3)
	cliOK := t.Run("cli", func(t *testing.T) {
		ids := imgCLIAccounts(t, pm, name)
		if !imgHas(ids, created.ID) {
			t.Errorf("hostmint accounts list -json: %v lacks %s", ids, created.ID)
		}
		if out, err := pm.exec(name, nil, "/hostmint", "accounts", "create", cliName, "--plan", "free"); err != nil {
			t.Fatalf("hostmint accounts create: %v\n%s", err, out)
		}
		if a := api.accountByName(cliName); a == nil || a["plan"] != "free" {
			t.Errorf("the account hostmint accounts create made: %v", a)
		}
	})

	// Restart: the store, the token and the key stay; DNS comes back on 53.
	step = time.Now()
	pm.must("restart", "-t", "10", name)
	api.waitHealthy(pm, name)
	t.Logf("restarted and healthy in %s", time.Since(step).Round(100*time.Millisecond))
	for f, was := range files {
		if now, err := os.ReadFile(filepath.Join(mount, f)); err != nil || !bytes.Equal(now, was) {
			t.Errorf("%s on the volume changed across the restart (%v)", f, err)
		}
	}
	code, body = api.do("GET", "/api/admin/accounts/"+created.ID, nil)
	if code != 200 || !strings.Contains(string(body), strconv.Quote(acct)) {
		t.Errorf("after the restart, GET /api/admin/accounts/%s: %d %s", created.ID, code, body)
	}
	checkSOA("after the restart")
	if cliOK {
		t.Run("cli after restart", func(t *testing.T) {
			if a := api.accountByName(cliName); a == nil {
				t.Errorf("after the restart, the account made with hostmint accounts create is gone")
			}
			if ids := imgCLIAccounts(t, pm, name); !imgHas(ids, created.ID) {
				t.Errorf("after the restart, hostmint accounts list -json: %v lacks %s", ids, created.ID)
			}
		})
	}
	pm.must("stop", "-t", "10", name)

	// PostgreSQL beside it: the same image with a Corefile of the
	// operator's mounted over its own, storage postgres. Here PostgreSQL is
	// this machine's, so the container shares the host's network (as
	// containers in one pod share theirs) and serves high ports.
	t.Run("postgres", func(t *testing.T) {
		step := time.Now()
		dsn := storagetest.DSN(t, storage.Postgres)
		dnsPort, apiPort := freePort(t), freePort(t)
		corefile := filepath.Join(t.TempDir(), "Corefile")
		text := fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    hostname {
        storage postgres %s
        api 127.0.0.1:%d
        admin_token_file /data/admin.token
        cert_encryption_key_file /data/cert.key
        domain dyn.example.test
        nameserver ns1.dyn.example.test 127.0.0.1:%d
        fast_udp
    }
    errors
}
`, dnsPort, dsn, apiPort, dnsPort)
		if err := os.WriteFile(corefile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		vol := "hostmint-e2e-pgdata-" + imgRand(4)
		pm.must("volume", "create", vol)
		c := "hostmint-e2e-pg-" + imgRand(4)
		pm.must(append(append([]string{"run", "-d", "--name", c, "--network", "host",
			"--cap-drop=all", "--cap-add=NET_BIND_SERVICE", "--read-only",
			"-v", vol + ":/data", "-v", corefile + ":/etc/hostmint/Corefile:ro"}, pm.ulimits...), image)...)
		s := &server{t: t, api: fmt.Sprintf("http://127.0.0.1:%d", apiPort), dnsAddr: fmt.Sprintf("127.0.0.1:%d", dnsPort)}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if resp, err := http.Get(s.api + "/api/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) || !pm.running(c) {
				t.Fatalf("the container on PostgreSQL never became healthy:\n%s", pm.logs(c))
			}
			time.Sleep(100 * time.Millisecond)
		}
		mount := strings.TrimSpace(pm.must("volume", "inspect", "--format", "{{.Mountpoint}}", vol))
		tok, err := os.ReadFile(filepath.Join(mount, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		s.admin = strings.TrimSpace(string(tok))
		id := s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "pg team", "plan": "free"}).str("id")
		if r := s.query("dyn.example.test", dns.TypeSOA, "udp"); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Errorf("SOA dyn.example.test from the container on PostgreSQL: %v", r)
		}
		// The row is in PostgreSQL itself.
		if n := imgPGCount(t, dsn, "SELECT count(*) FROM accounts WHERE name = 'pg team'"); n != 1 {
			t.Errorf("accounts named 'pg team' in PostgreSQL: %d, want 1", n)
		}
		t.Logf("container on PostgreSQL healthy and writing in %s", time.Since(step).Round(100*time.Millisecond))
		t.Run("cli", func(t *testing.T) {
			out, err := pm.exec(c, []string{"HOSTMINT_SERVER=" + s.api}, "/hostmint", "accounts", "list", "-json")
			if err != nil {
				t.Fatalf("hostmint accounts list -json: %v\n%s", err, out)
			}
			if ids := imgAccountIDs(t, out); !imgHas(ids, id) {
				t.Errorf("hostmint accounts list -json on PostgreSQL: %v lacks %s", ids, id)
			}
		})
		pm.must("stop", "-t", "10", c)
	})
	t.Logf("TestImage took %s", time.Since(began).Round(time.Second))
}

// podman runs Debian's podman the way ../shared/notes/containers.md found
// works here (runc, cgroupfs, the process's own nofile limit), on a store of
// this test's own.
type imgPodman struct {
	t       *testing.T
	global  []string // flags before the command
	ulimits []string // for run and build
}

func newImgPodman(t *testing.T) *imgPodman {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is not installed: scripts/test-deps.sh installs it (podman runc uidmap fuse-overlayfs busybox-static)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("TestImage runs podman as root (a network namespace, volumes read from the host): run the tests as root")
	}
	for _, c := range []string{"runc", "ip"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is not installed: run scripts/test-deps.sh", c)
		}
	}
	dir, err := os.MkdirTemp("", "hostmint-podman")
	if err != nil {
		t.Fatal(err)
	}
	var nofile, nproc unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
	unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
	procs := uint64(32768)
	if nproc.Max < procs {
		procs = nproc.Max
	}
	pm := &imgPodman{
		t: t,
		global: []string{
			"--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"),
			"--tmpdir", filepath.Join(dir, "tmp"), "--storage-driver", "overlay",
			"--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "file",
		},
		ulimits: []string{
			"--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Cur, nofile.Cur),
			"--ulimit", fmt.Sprintf("nproc=%d:%d", procs, procs),
		},
	}
	if out, err := pm.cmd("info", "--format", "{{.Host.OCIRuntime.Name}}").CombinedOutput(); err != nil {
		t.Fatalf("podman cannot run here: %v\n%s", err, out)
	}
	t.Cleanup(func() { pm.reset(dir) })
	return pm
}

func (pm *imgPodman) cmd(args ...string) *exec.Cmd {
	return exec.Command("podman", append(append([]string{}, pm.global...), args...)...)
}

// run runs podman, returning its output and error.
func (pm *imgPodman) run(args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	c := pm.cmd(args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// must runs podman and fails the test unless it succeeds; it returns stdout.
func (pm *imgPodman) must(args ...string) string {
	pm.t.Helper()
	out, err := pm.run(args...)
	if err != nil {
		pm.t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// runFor runs podman for at most d; it returns the exit code (-1 if it
// did not end) and the combined output.
func (pm *imgPodman) runFor(d time.Duration, args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := exec.CommandContext(ctx, "podman", append(append([]string{}, pm.global...), args...)...)
	out, err := c.CombinedOutput()
	if ctx.Err() != nil {
		return -1, string(out)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		return -1, string(out) + err.Error()
	}
	return 0, string(out)
}

// exec runs a command in container c (with env, NAME=VALUE).
func (pm *imgPodman) exec(c string, env []string, command ...string) (string, error) {
	args := []string{"exec"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	return pm.run(append(append(args, c), command...)...)
}

func (pm *imgPodman) logs(c string) string {
	out, _ := pm.run("logs", c)
	return out
}

func (pm *imgPodman) running(c string) bool {
	out, err := pm.run("inspect", "--format", "{{.State.Running}}", c)
	return err == nil && strings.TrimSpace(out) == "true"
}

// processStatus is /proc/PID/status of container c's first process.
func (pm *imgPodman) processStatus(c string) map[string]string {
	pm.t.Helper()
	pid := strings.TrimSpace(pm.must("inspect", "--format", "{{.State.Pid}}", c))
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		pm.t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// reset removes the test's containers, volumes and images, then its store.
func (pm *imgPodman) reset(dir string) {
	pm.run("rm", "-a", "-f", "-v", "-t", "0")
	pm.run("volume", "rm", "-a", "-f")
	pm.run("rmi", "-a", "-f")
	// The overlay driver may leave its own mounts in the store.
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		lines := strings.Split(string(b), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if f := strings.Fields(lines[i]); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				unix.Unmount(f[4], unix.MNT_DETACH)
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		pm.t.Logf("removing podman's store: %v", err)
	}
}

// netns is a network namespace with loopback up and nothing else.
type imgNetns struct {
	name string
	f    *os.File
}

func newImgNetns(t *testing.T) *imgNetns {
	t.Helper()
	n := &imgNetns{name: "hostmint-img-" + imgRand(4)}
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", n.name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", n.name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("loopback up in %s: %v\n%s", n.name, err, out)
	}
	f, err := os.Open("/run/netns/" + n.name)
	if err != nil {
		t.Fatal(err)
	}
	n.f = f
	t.Cleanup(func() { f.Close() })
	return n
}

// dial connects from inside the namespace: the socket is made by a thread
// that entered it, and stays there whichever thread uses it later.
func (n *imgNetns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, so nothing
		// else ever runs in the namespace.
		runtime.LockOSThread()
		if err := unix.Setns(int(n.f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("entering %s: %w", n.name, err)}
			return
		}
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err := d.DialContext(ctx, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// query asks addr inside the namespace over proto.
func (n *imgNetns) query(name string, qtype uint16, proto, addr string) (*dns.Msg, error) {
	c, err := n.dial(context.Background(), proto, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	cl := &dns.Client{Net: proto, Timeout: 3 * time.Second}
	r, _, err := cl.ExchangeWithConn(m, &dns.Conn{Conn: c})
	return r, err
}

// imgAPI is the HTTP API of a server inside a namespace.
type imgAPI struct {
	t     *testing.T
	ns    *imgNetns
	base  string
	token string
}

func (a *imgAPI) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: a.ns.dial, DisableKeepAlives: true}}
}

func (a *imgAPI) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.client().Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// waitHealthy waits for /api/health 200 from container c.
func (a *imgAPI) waitHealthy(pm *imgPodman, c string) {
	a.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		resp, err := a.client().Get(a.base + "/api/health")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) || !pm.running(c) {
			a.t.Fatalf("GET /api/health never answered 200 (last: %s); container log:\n%s", last, pm.logs(c))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// accountByName is the account named name (the admin API's exact match).
func (a *imgAPI) accountByName(name string) map[string]any {
	a.t.Helper()
	code, body := a.do("GET", "/api/admin/accounts?name="+strings.ReplaceAll(name, " ", "%20"), nil)
	if code != 200 {
		a.t.Errorf("GET /api/admin/accounts?name=%s: %d %s", name, code, body)
		return nil
	}
	var r struct{ Accounts []map[string]any }
	json.Unmarshal(body, &r)
	if len(r.Accounts) != 1 {
		return nil
	}
	return r.Accounts[0]
}

// imgCLIAccounts runs hostmint accounts list -json in container c.
func imgCLIAccounts(t *testing.T, pm *imgPodman, c string) []string {
	t.Helper()
	out, err := pm.exec(c, nil, "/hostmint", "accounts", "list", "-json")
	if err != nil {
		if strings.Contains(out, "unknown command") {
			t.Fatalf("hostmint in the image has no accounts command yet (the operator CLI of DESIGN.md):\n%s", out)
		}
		t.Fatalf("hostmint accounts list -json: %v\n%s", err, out)
	}
	return imgAccountIDs(t, out)
}

// imgAccountIDs are the ids in a {"accounts":[...]} document.
func imgAccountIDs(t *testing.T, doc string) []string {
	t.Helper()
	var r struct {
		Accounts []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatalf("hostmint accounts list -json printed no {\"accounts\":[...]}: %v\n%s", err, doc)
	}
	ids := []string{}
	for _, a := range r.Accounts {
		ids = append(ids, a.ID)
	}
	return ids
}

func imgPGCount(t *testing.T, dsn, query string) int {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func imgGoEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func imgRand(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func imgHas(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
