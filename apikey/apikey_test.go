package apikey

import (
	"strings"
	"testing"
)

func TestNewParseVerify(t *testing.T) {
	id, secret, token := New()
	if strings.Contains(id, "_") || strings.Contains(secret, "_") {
		t.Fatalf("underscore in id %q or secret %q", id, secret)
	}
	gotID, gotSecret, ok := Parse(token)
	if !ok || gotID != id || gotSecret != secret {
		t.Fatalf("Parse(%q) = %q, %q, %v", token, gotID, gotSecret, ok)
	}
	h := Hash(secret)
	if !Verify(h, secret) || Verify(h, secret+"x") {
		t.Fatal("Verify does not tell the secret from another")
	}
}

func TestParseRejects(t *testing.T) {
	for _, tok := range []string{"", "svc_", "svc__x", "svc_id_", "svc_id", "key_id_secret", "SVC_a_b"} {
		if _, _, ok := Parse(tok); ok {
			t.Errorf("Parse(%q) accepted", tok)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	_, secret, _ := New()
	h := Hash(secret)
	for b.Loop() {
		Verify(h, secret)
	}
}
