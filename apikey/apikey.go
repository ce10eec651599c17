// Package apikey holds the format of API keys, "svc_<key_id>_<secret>", and
// the hashing of their secrets. It knows nothing of accounts or storage: the
// caller stores the id and the hash, never the secret.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

const prefix = "svc_"

// Lowercase base32 has no "_", so the token splits unambiguously.
var enc = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Random returns n random bytes as lowercase base32 text.
func Random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return enc.EncodeToString(b)
}

// New makes a key: its id (10 random bytes), its secret (20 random bytes,
// 160 bits) and the token the caller presents.
func New() (id, secret, token string) {
	id, secret = Random(10), Random(20)
	return id, secret, prefix + id + "_" + secret
}

// Parse splits a token into id and secret; ok is false for anything that is
// not of the key's shape.
func Parse(token string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(token, prefix)
	if !found {
		return "", "", false
	}
	id, secret, found = strings.Cut(rest, "_")
	if !found || id == "" || secret == "" || len(id) > 64 || len(secret) > 128 {
		return "", "", false
	}
	return id, secret, true
}

// Hash is the stored form of a secret. The secrets are long random strings,
// so a plain SHA-256 is as strong as a slow password hash and costs nothing
// per request.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Verify compares secret with a stored hash in constant time.
func Verify(hash, secret string) bool {
	return subtle.ConstantTimeCompare([]byte(hash), []byte(Hash(secret))) == 1
}
