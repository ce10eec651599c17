// Package seal encrypts secrets the service must be able to read back
// (DNSSEC private keys, managed certificate keys) before they reach the
// store: AES-256-GCM under the deployment's encryption key. It knows
// nothing of what it seals.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Key is a 32-byte AES-256 key.
type Key []byte

// ErrNoKey is returned when sealing is asked of a deployment without a key.
var ErrNoKey = errors.New("seal: no encryption key configured")

// LoadKey reads a key file: 32 random bytes, base64 (openssl rand -base64 32).
func LoadKey(path string) (Key, error) {
	if err := CheckPrivate(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("%s: want 32 random bytes, base64 (openssl rand -base64 32)", path)
	}
	return k, nil
}

// CheckPrivate refuses a file of secrets that its group or others may
// read or write, as ssh refuses such a key: a service that went on would
// hand its secrets to every local user without a word.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s is readable or writable by others (mode %04o): chmod 600 %s", path, m, path)
	}
	return nil
}

// Seal encrypts plaintext; the result is base64 text (nonce, then
// ciphertext and tag). label is authenticated with it, so a sealed value
// cannot be moved to another purpose or row.
func (k Key) Seal(plaintext []byte, label string) (string, error) {
	aead, err := k.aead()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	out := aead.Seal(nonce, nonce, plaintext, []byte(label))
	return base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts what Seal produced under the same label.
func (k Key) Open(sealed, label string) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < aead.NonceSize() {
		return nil, errors.New("seal: not a sealed value")
	}
	pt, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(label))
	if err != nil {
		return nil, errors.New("seal: cannot open (wrong key or label, or tampered)")
	}
	return pt, nil
}

func (k Key) aead() (cipher.AEAD, error) {
	if len(k) == 0 {
		return nil, ErrNoKey
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
