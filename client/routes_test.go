package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/adminapi"
)

// clientCalls are the (method, pattern) pairs the package's calls send,
// read from its source: every c.call with literal arguments.
func clientCalls(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "call" || len(call.Args) < 3 {
				return true
			}
			method, ok1 := call.Args[1].(*ast.BasicLit)
			path, ok2 := call.Args[2].(*ast.BasicLit)
			if !ok1 || !ok2 {
				t.Errorf("%s: a call whose method and path are not literals", fset.Position(call.Pos()))
				return true
			}
			m, _ := strconv.Unquote(method.Value)
			p, _ := strconv.Unquote(path.Value)
			out = append(out, m+" "+p)
			return true
		})
	}
	return out
}

// Every admin route (and the health check) has a method here, and every
// method here is a route: a route added without one, or a method left
// behind by a route's change, fails.
func TestRoutes(t *testing.T) {
	var routes []string
	for _, e := range adminapi.Endpoints() {
		if e.Admin || e.Path == "/api/health" {
			routes = append(routes, e.Method+" "+e.Path)
		}
	}
	calls := clientCalls(t)
	for _, r := range routes {
		if !slices.Contains(calls, r) {
			t.Errorf("route %s has no client method", r)
		}
	}
	for _, c := range calls {
		if !slices.Contains(routes, c) {
			t.Errorf("client method for %s: no such admin route", c)
		}
	}
	if len(calls) != len(routes) {
		t.Errorf("%d client calls for %d routes: one route is called twice", len(calls), len(routes))
	}
}
