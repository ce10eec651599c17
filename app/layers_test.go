package app

import (
	"go/parser"
	"go/token"
	"io/fs"
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
	{"foundations", []string{"profile", "apierror", "addrclass", "apikey", "labels", "seal", "nsprobe", "storage", "storage/storagetest"}},
	{"rules", []string{"access", "plans", "audit", "ratelimit", "records", "domains", "certs", "targets", "diagnose", "accounts", "hostnames", "idempotency"}},
	{"doors", []string{"httperr", "adminapi", "dashboard", "dnsupdate", "acmedns"}},
	{"wiring", []string{"app"}},
	{"DNS", []string{"plugin/hostname/udpbatch", "plugin/hostname"}},
	{"binaries", []string{"coredns-build", "cmd/hostmint", "bench", "e2e"}},
}

// Arrows the layers allow that the design still forbids.
var forbidden = map[string][]string{
	// Each door stands alone and calls the rules, not another door.
	"adminapi":  {"dashboard", "dnsupdate"},
	"dashboard": {"adminapi", "dnsupdate"},
	"dnsupdate": {"adminapi", "dashboard", "httperr"}, // DNS, not HTTP
	"httperr":   {"adminapi", "dashboard", "dnsupdate"},
	// The plugin imports the wiring and its index's inputs, nothing more.
	"plugin/hostname": {"access", "plans", "audit", "ratelimit", "certs", "targets", "diagnose", "accounts", "hostnames", "idempotency",
		"apierror", "profile", "addrclass", "apikey", "labels", "seal", "nsprobe", "adminapi", "dashboard"},
	"coredns-build": {"app"}, // CoreDNS starts the plugin, the plugin starts the app
}

// imports reads the project imports of every package's non-test files.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	root := ".."
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		pkg = filepath.ToSlash(pkg)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
		for _, dep := range deps {
			if to := layer[dep]; to > from {
				t.Errorf("%s (%s) imports %s (%s), a layer above it", pkg, layers[from].name, dep, layers[to].name)
			}
			if slices.Contains(forbidden[pkg], dep) {
				t.Errorf("%s imports %s, which the design forbids", pkg, dep)
			}
		}
	}
}
