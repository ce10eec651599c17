package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The built binary, made once per test run by the README's build command.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "hostmint-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "coredns")
		cmd := exec.Command("go", "build", "-o", binPath, "./coredns-build")
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = &buildError{err: err, out: out}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

func cleanupBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// process is the binary running a server's Corefile.
type process struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	mu  sync.Mutex
}

// spawn runs the built binary on o's Corefile and waits until it is healthy.
func spawn(t testing.TB, o options) (*server, *process) {
	t.Helper()
	s, p, _ := spawnEdited(t, o, nil)
	return s, p
}

// spawnEdited is spawn with the Corefile changed by edit (if not nil)
// before the binary reads it; it returns the Corefile's path too.
func spawnEdited(t testing.TB, o options, edit func(string) string) (*server, *process, string) {
	t.Helper()
	text, s := corefile(t, &o)
	if edit != nil {
		text = edit(text)
		s.corefile = text
	}
	p, path := launch(t, s, text)
	if err := s.waitReady(25 * time.Second); err != nil {
		t.Fatalf("%v; server output:\n%s", err, p.output())
	}
	return s, p, path
}

// launch starts the binary on Corefile text in s's directory, without
// waiting for it; it returns the Corefile's path too.
func launch(t testing.TB, s *server, text string) (*process, string) {
	t.Helper()
	return launchWith(t, s, text)
}

// launchWith is launch with the binary run by the command wrap (such as
// ip netns exec NAME).
func launchWith(t testing.TB, s *server, text string, wrap ...string) (*process, string) {
	t.Helper()
	path := filepath.Join(s.dir, "Corefile")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &process{out: new(bytes.Buffer)}
	args := append(append(wrap, binary(t)), "-conf", path)
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Dir = s.dir
	p.cmd.Stdout, p.cmd.Stderr = lockedWriter{p}, lockedWriter{p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	return p, path
}

type lockedWriter struct{ p *process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kill signals the process and waits for it to end.
func (p *process) kill(sig syscall.Signal) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(sig)
	p.cmd.Wait()
}
