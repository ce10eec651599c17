package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// DNSViz, as a DNS operator runs it before going live (probe, then grok
// with the zone's key as trust anchor), finds no error in a signed domain:
// its apex, a hostname, a name that does not exist, one at the longest a
// name can be, and a second signed domain whose nameserver lives in the
// first. DNSViz looks names up by itself, so it runs in a network
// namespace that has nothing but loopback, with a Hostmint node of its
// own on port 53 there, on the store the test server wrote.
func TestDNSVizGrok(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"dnsviz", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (run ./scripts/test-deps.sh): %v", tool, err)
		}
	}
	s, name := signedPool(t)
	anchors := filepath.Join(t.TempDir(), "anchors")
	var keys []string
	for _, zone := range []string{"example.org.", "other.test."} {
		k, ok := first[*dns.DNSKEY](s.query(zone, dns.TypeDNSKEY, "udp").Answer)
		if !ok {
			t.Fatalf("%s serves no DNSKEY", zone)
		}
		keys = append(keys, k.String())
	}
	if err := os.WriteFile(anchors, []byte(strings.Join(keys, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ns := loopbackNetns(t)
	text := strings.Replace(s.corefile, ".:"+port(s.dnsAddr)+" {", ".:53 {", 1)
	text = strings.Replace(text, "nameserver ns1.example.org "+s.dnsAddr, "nameserver ns1.example.org 127.0.0.1:53", 1)
	inside := &server{t: t, dir: t.TempDir()}
	p, _ := launchWith(t, inside, text, "ip", "netns", "exec", ns)
	inNetns := func(args ...string) ([]byte, error) {
		return exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	}
	if !within(20*time.Second, func() bool {
		out, err := inNetns("dig", "+short", "+time=1", "+tries=1", "@127.0.0.1", "example.org", "SOA")
		return err == nil && len(bytes.TrimSpace(out)) > 0
	}) {
		t.Fatalf("the node in the namespace never answered:\n%s", p.output())
	}

	long := longName(255 - 13)
	probe := filepath.Join(t.TempDir(), "probe.json")
	out, err := inNetns("dnsviz", "probe", "-A", "-4", "-o", probe,
		"-x", "example.org+:ns1.example.org=127.0.0.1", "-x", "other.test+:ns1.example.org=127.0.0.1",
		"example.org", name, "nothing-here.example.org", strings.TrimSuffix(long, "."), "other.test")
	if err != nil {
		t.Fatalf("dnsviz probe: %v\n%s", err, out)
	}
	cmd := exec.Command("/usr/bin/python3", grokShim(t), "grok", "-P", "-t", anchors, "-r", probe)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	grok, err := cmd.Output()
	if err != nil {
		t.Fatalf("dnsviz grok: %v\n%s%s", err, grok, stderr.String())
	}
	var report map[string]any
	if err := json.Unmarshal(grok, &report); err != nil {
		t.Fatalf("dnsviz grok's report is not JSON: %v\n%s%s", err, grok, stderr.String())
	}
	var errs, warns []string
	collect(report, "", &errs, &warns)
	for _, w := range warns {
		t.Logf("dnsviz warning: %s", w)
	}
	for _, e := range errs {
		t.Errorf("dnsviz error: %s", e)
	}
	for _, zone := range []string{"example.org.", "other.test."} {
		if st := statusOf(report, zone); st != "SECURE" {
			t.Errorf("dnsviz: %s is %q, want SECURE from its trust anchor", zone, st)
		}
	}
}

// grokShim is a script that runs dnsviz with pygraphviz.release made up
// from pygraphviz's own version: Debian's dnsviz 0.9.4 checks the version
// there, which Debian's pygraphviz 1.7 no longer has, and refuses to run.
func grokShim(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run_dnsviz.py") // not dnsviz.py: it would hide the package
	shim := `import runpy, sys, types
import pygraphviz
release = types.ModuleType("pygraphviz.release")
release.version = pygraphviz.__version__
sys.modules["pygraphviz.release"] = release
pygraphviz.release = release
sys.argv = ["dnsviz"] + sys.argv[1:]
runpy.run_path("/usr/bin/dnsviz", run_name="__main__")
`
	if err := os.WriteFile(path, []byte(shim), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// collect walks a grok report and notes every entry of its "errors" and
// "warnings" lists with where it was found.
func collect(v any, path string, errs, warns *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if list, ok := x.([]any); ok && (k == "errors" || k == "warnings") {
				for _, e := range list {
					b, _ := json.Marshal(e)
					note := path + ": " + string(b)
					if k == "errors" {
						*errs = append(*errs, note)
					} else {
						*warns = append(*warns, note)
					}
				}
				continue
			}
			collect(x, path+"/"+k, errs, warns)
		}
	case []any:
		for i, x := range v {
			collect(x, fmt.Sprintf("%s[%d]", path, i), errs, warns)
		}
	}
}

// statusOf is the status grok gives a zone (SECURE when its trust
// anchor's key signs it).
func statusOf(report map[string]any, zone string) string {
	z, _ := report[zone].(map[string]any)
	zz, _ := z["zone"].(map[string]any)
	st, _ := zz["status"].(string)
	return st
}

// loopbackNetns makes a network namespace with loopback up and nothing
// else, deleted at cleanup.
func loopbackNetns(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	ns := "hostmint-" + hex.EncodeToString(b)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add (the test needs root): %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	if out, err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("loopback up in %s: %v\n%s", ns, err, out)
	}
	return ns
}

// port is addr's port.
func port(addr string) string {
	_, p, _ := strings.Cut(addr, ":")
	return p
}
