package e2e

import (
	"strings"
	"testing"
)

// Labels are lowered by the one rule (labels.Lower): A-Z only. The Kelvin
// sign (U+212A) is not K, and a label holding it is refused rather than
// minted as the "k..." name it looks like.
func TestLabelsLowerASCIIOnly(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	_, key := s.account("pro")
	r := s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "\u212Aelvin"})
	if r.status != 400 || r.str("code") != "BAD_REQUEST" {
		t.Errorf("a label with the Kelvin sign: %d %s, want 400 BAD_REQUEST", r.status, r.raw)
	}
	if !strings.Contains(r.str("error"), "label") {
		t.Errorf("the message does not name the label: %s", r.raw)
	}
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "KELVIN"})
	if h.str("hostname") != "kelvin.example.org" {
		t.Errorf("an ASCII label in capitals minted %q, want kelvin.example.org", h.str("hostname"))
	}
}
