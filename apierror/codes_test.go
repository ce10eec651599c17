package apierror

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Codes holds every Code constant of this package, once: it is the one
// list the OpenAPI description enumerates.
func TestCodesAreEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "apierror.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Code") && i < len(vs.Values) {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, _ := strconv.Unquote(lit.Value)
					consts = append(consts, v)
				}
			}
		}
		return true
	})
	got := slices.Clone(Codes)
	slices.Sort(got)
	slices.Sort(consts)
	if !slices.Equal(got, consts) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("Codes %v, constants %v: want each constant once", got, consts)
	}
}
