package app

import (
	"errors"
	"testing"
)

// The keys a reload's new servers verify count once the reload is done
// (the old servers answer until then), and not at all if it failed.
func TestServeTSIGAfterReload(t *testing.T) {
	served := func(n *Node) string {
		if m := n.node.served.Load(); m != nil {
			return (*m)["k."]
		}
		return ""
	}
	cases := []struct {
		name   string
		err    error
		during string // what counts while the reload runs
		after  string
	}{
		{"reloaded", nil, "old", "new"},
		{"failed", errors.New("no"), "old", "old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &Node{node: &node{}}
			n.ServeTSIG(map[string]string{"k.": "old"})
			n.ReloadTSIG(func() error {
				n.ServeTSIG(map[string]string{"k.": "new"}) // the new instance starts
				if got := served(n); got != c.during {
					t.Errorf("during the reload: %q, want %q", got, c.during)
				}
				return c.err
			})
			if got := served(n); got != c.after {
				t.Errorf("after: %q, want %q", got, c.after)
			}
		})
	}
}
