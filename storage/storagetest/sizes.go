package storagetest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Sizes are the row counts a benchmark across sizes runs at: defaults, or
// the comma-separated counts of the environment variable env.
func Sizes(tb testing.TB, env string, defaults ...int) []int {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		return defaults
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("%s: %q is not a count", env, f)
		}
		out = append(out, n)
	}
	return out
}

// Series is a query of the integers 1 to its one parameter, as column i,
// in d's SQL: what a benchmark seeds rows from in one statement.
func Series(d storage.Dialect) string {
	if d == storage.SQLite {
		return "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?) SELECT i FROM g"
	}
	return "SELECT g AS i FROM generate_series(1, ?) AS g"
}
