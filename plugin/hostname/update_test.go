package hostname

import "testing"

// Only a key the servers do not verify yet (new, or its secret changed)
// reloads them: a dropped key is refused without one.
func TestUnverified(t *testing.T) {
	baked := map[string]string{"a.tsig.": "sa", "b.tsig.": "sb"}
	cases := []struct {
		name string
		keys map[string]string
		want bool
	}{
		{"the same keys", map[string]string{"a.tsig.": "sa", "b.tsig.": "sb"}, false},
		{"one revoked", map[string]string{"a.tsig.": "sa"}, false},
		{"all revoked", map[string]string{}, false},
		{"a new key", map[string]string{"a.tsig.": "sa", "b.tsig.": "sb", "c.tsig.": "sc"}, true},
		{"one revoked, one new", map[string]string{"a.tsig.": "sa", "c.tsig.": "sc"}, true},
		{"a secret changed", map[string]string{"a.tsig.": "other", "b.tsig.": "sb"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := unverified(c.keys, baked); got != c.want {
				t.Errorf("unverified = %v, want %v", got, c.want)
			}
		})
	}
}
