package app

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/hostmint/hostmint/"

// The layers of the project, bottom up. A package may import packages of
// its own layer and of the layers below it, never above; the README's
// Architecture section draws the same picture.
var layers = []struct {
	name     string
	packages []string
}{
	{"foundations", []string{"profile", "apierror", "addrclass", "apikey", "labels", "seal", "nsprobe", "storage/pipeline", "storage/pgwire", "storage", "storage/storagetest"}},
	{"rules", []string{"access", "plans", "audit", "ratelimit", "records", "served", "domains", "certs", "targets", "diagnose", "accounts", "hostnames", "idempotency"}},
	{"doors", []string{"httperr", "adminapi", "dashboard", "dnsupdate", "acmedns"}},
	{"wiring", []string{"app"}},
	{"DNS", []string{"plugin/hostname/coreinternals", "plugin/hostname/udpbatch", "plugin/hostname/fastudp", "plugin/hostname/sign", "plugin/hostname/chain", "plugin/hostname/rrl", "plugin/hostname/index", "plugin/hostname/answer", "plugin/hostname/xfr", "plugin/hostname"}},
	{"binaries", []string{"client", "coredns-build", "cmd/hostmint", "bench", "e2e"}},
}

// Arrows the layers allow that the design still forbids.
var forbidden = map[string][]string{
	// Each door stands alone and calls the rules, not another door.
	"adminapi":  {"dashboard", "dnsupdate"},
	"dashboard": {"adminapi", "dnsupdate"},
	"dnsupdate": {"adminapi", "dashboard", "httperr"}, // DNS, not HTTP
	"httperr":   {"adminapi", "dashboard", "dnsupdate"},
	// The plugin imports the wiring and its index's inputs, nothing more:
	// its UPDATE door is handed to it (app.UpdateDoor), and what a name
	// serves is the projection's (served), not the records' own.
	"plugin/hostname": {"access", "plans", "audit", "ratelimit", "certs", "targets", "diagnose", "accounts", "hostnames", "idempotency",
		"apierror", "profile", "addrclass", "apikey", "labels", "seal", "nsprobe", "adminapi", "dashboard", "dnsupdate", "records", "httperr", "acmedns"},
	"coredns-build": {"app"}, // CoreDNS starts the plugin, the plugin starts the app
}

// The foundations and the rules speak no HTTP: they answer in the rules'
// codes (apierror), which the HTTP doors translate (httperr), so the audit
// log, say, is told a refusal's code, not a request. These call out over
// HTTP as clients, which is no door.
var httpClients = []string{
	"certs",    // an ACME CA
	"diagnose", // certificate transparency logs
}

// speaksHTTP reports whether importing path brings HTTP in: net/http and
// its subpackages, the doors' httperr, or any module's http* package
// (golang.org/x/net/http2).
func speaksHTTP(path string) bool {
	for elem := range strings.SplitSeq(path, "/") {
		if strings.HasPrefix(elem, "http") {
			return true
		}
	}
	return false
}

// root is the module's directory, from this package's.
const root = ".."

// sources calls fn with the path of every non-test Go file of the module
// (testdata and hidden directories left out) and its path in the module.
func sources(t *testing.T, fn func(path, rel string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		return fn(path, filepath.ToSlash(rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// imports reads the imports of every package's non-test files, by their
// full paths.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	sources(t, func(path, rel string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(out[pkg], p) {
				out[pkg] = append(out[pkg], p)
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	return out
}

func TestLayers(t *testing.T) {
	t.Parallel()
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l.packages {
			layer[p] = i
		}
	}
	for pkg, deps := range imports(t) {
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s is in no layer: add it to layers here and to the README's Architecture section", pkg)
			continue
		}
		for _, path := range deps {
			dep, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			if to := layer[dep]; to > from {
				t.Errorf("%s (%s) imports %s (%s), a layer above it", pkg, layers[from].name, dep, layers[to].name)
			}
			if slices.Contains(forbidden[pkg], dep) {
				t.Errorf("%s imports %s, which the design forbids", pkg, dep)
			}
		}
	}
}

// maxLines is the most lines a hand-written file holds: one longer holds
// several ideas, and is split along them, one idea a file.
const maxLines = 400

// longFiles are the files still allowed over maxLines, at the lines they
// hold now: they grow no further, and an allowance goes once its file is
// split (the test fails while it stays).
var longFiles = map[string]int{}

// No hand-written file passes maxLines; generated ones ("Code generated
// ... DO NOT EDIT.") are not counted.
func TestFileSizes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	sources(t, func(path, rel string) error {
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		n := bytes.Count(src, []byte("\n"))
		allowed, ok := longFiles[rel]
		seen[rel] = ok
		switch {
		case ok && n <= maxLines:
			t.Errorf("%s has %d lines, no more than %d: remove its allowance from longFiles", rel, n, maxLines)
		case ok && n > allowed:
			t.Errorf("%s has %d lines, more than the %d it is allowed until it is split: split it by idea, one idea a file", rel, n, allowed)
		case !ok && n > maxLines:
			t.Errorf("%s has %d lines, more than %d: split it by idea, one idea a file", rel, n, maxLines)
		}
		return nil
	})
	for rel := range longFiles {
		if !seen[rel] {
			t.Errorf("%s is allowed in longFiles but is no hand-written file of the module: remove its allowance", rel)
		}
	}
}

func TestNoHTTP(t *testing.T) {
	t.Parallel()
	var quiet []string
	for _, l := range layers[:2] { // the foundations and the rules
		for _, p := range l.packages {
			if !slices.Contains(httpClients, p) {
				quiet = append(quiet, p)
			}
		}
	}
	all := imports(t)
	for _, pkg := range quiet {
		for _, path := range all[pkg] {
			if speaksHTTP(path) {
				t.Errorf("%s imports %s: it speaks no HTTP (the HTTP doors translate, in httperr)", pkg, path)
			}
		}
	}
}

func TestSpeaksHTTP(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"net/http":               true,
		"net/http/httptest":      true,
		"golang.org/x/net/http2": true,
		module + "httperr":       true,
		"net":                    false,
		"net/url":                false,
		"github.com/miekg/dns":   false,
		module + "apierror":      false,
	} {
		if got := speaksHTTP(path); got != want {
			t.Errorf("speaksHTTP(%s) = %v, want %v", path, got, want)
		}
	}
}

// The plugin stands on few project packages: the wiring, the rows and
// their projection, and the domains' names and signers (issue 44); what
// else it needs is handed to it through interfaces of its own.
func TestPluginImports(t *testing.T) {
	t.Parallel()
	const most = 4
	var outside []string
	for _, dep := range imports(t)["plugin/hostname"] {
		if p, ok := strings.CutPrefix(dep, module); ok && !strings.HasPrefix(p, "plugin/hostname/") {
			outside = append(outside, p)
		}
	}
	if len(outside) > most {
		slices.Sort(outside)
		t.Errorf("plugin/hostname imports %d project packages outside its tree, at most %d: %v", len(outside), most, outside)
	}
	// Its own packages (the index, the answerer, transfers, the fast path,
	// signing, rate limits, CoreDNS's internals) are parts of it that stand
	// alone, with no circle back to it; the index alone reads the store's
	// rows, their projection and the domains' signers, and the answerer and
	// transfers the projection.
	inputs := map[string][]string{"plugin/hostname/index": {"storage", "served", "domains"}, "plugin/hostname/answer": {"served"},
		"plugin/hostname/xfr": {"served"}}
	for pkg, deps := range imports(t) {
		if !strings.HasPrefix(pkg, "plugin/hostname/") {
			continue
		}
		for _, dep := range deps {
			p, ok := strings.CutPrefix(dep, module)
			if ok && (!strings.HasPrefix(p, "plugin/hostname/") && !slices.Contains(inputs[pkg], p) || p == "plugin/hostname") {
				t.Errorf("%s imports %s: a part of the plugin imports no other project package but its inputs", pkg, p)
			}
		}
	}
}
