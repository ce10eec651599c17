package records

import "testing"

func TestCAAPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		entry string
		ok    bool
	}{
		{`0 issue "letsencrypt.org"`, true},
		{`128 issue ";"`, true},
		{`0 iodef "mailto:security@example.net"`, true},
		{`0 iodef "https://example.net/caa"`, true},
		{`0 issue letsencrypt.org`, false},      // quotes
		{`0 foo "x"`, false},                    // tag
		{`0 iodef "not a url"`, false},          // an iodef a CA cannot report to
		{`0 iodef "ftp://example.net/"`, false}, // nor this
		{`0 issue "ca.example.net\007"`, false}, // a control character, escaped
		{`0 issue "ca.example.net\255x"`, true}, // a byte past ASCII is not a control character
		{`300 issue "letsencrypt.org"`, false},  // flags
	} {
		_, err := CAAPolicy([]string{tc.entry})
		if (err == nil) != tc.ok {
			t.Errorf("CAAPolicy(%s) = %v, want ok %v", tc.entry, err, tc.ok)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`plain`, "plain"}, {`a\"b`, `a"b`}, {`a\\b`, `a\b`}, {`bell\007`, "bell\a"}, {`end\`, `end\`},
	} {
		if got := unescape(tc.in); got != tc.want {
			t.Errorf("unescape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
