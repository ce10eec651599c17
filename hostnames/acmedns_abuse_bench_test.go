package hostnames

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"golang.org/x/crypto/bcrypt"
)

// What an anonymous acme-dns caller costs: a registration (the lock, the
// three counts and the row), each from a /16 of its own with the clock two
// seconds on, so that the hour's window holds up to 1 800 registrations as
// a busy hour does; and an update's authentication on each of its paths.
//
//	go test -run '^$' -bench 'Register$|ACMEAuth' -benchtime 2000x ./hostnames/
func BenchmarkRegister(b *testing.B) {
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			c, clock := benchCertificates(b, d)
			b.ResetTimer()
			for i := range b.N {
				clock.Add(int64(2 * time.Second))
				from := netip.AddrFrom4([4]byte{byte(i >> 8), byte(i), 7, 1})
				if _, err := c.Register(context.Background(), from, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The paths of an acme-dns update's authentication: the right password (a
// published value), a wrong one, an unknown username, and a wrong password
// for a registration imported with acme-dns's bcrypt hash (cost 10).
func BenchmarkACMEAuth(b *testing.B) {
	const password = "0123456789abcdefghijklmnopqrstuvwxyzABCD"
	imported, err := bcrypt.GenerateFromPassword([]byte(password), 10)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range storagetest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			c, _ := benchCertificates(b, d)
			now := time.Now().UnixMilli()
			err := c.write(context.Background(), "", func(ctx context.Context, tx *storage.Tx) error {
				for _, r := range []struct{ user, hash string }{{"native", apikey.Hash(password)}, {"imported", string(imported)}} {
					row, err := RegistrationRow(r.user, r.user, "auth.example.org", r.hash, nil, "192.0.2.0/24", now)
					if err != nil {
						return err
					}
					if err := tx.InsertRegistration(ctx, row); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			value := strings.Repeat("v", 43)
			for _, p := range []struct {
				name, user, key, sub string
				code                 string // "" for success
			}{
				{"right-password", "native", password, "native", ""},
				{"wrong-password", "native", password + "x", "native", apierror.CodeUnauthorized},
				{"unknown-user", "nobody", password, "nobody", apierror.CodeUnauthorized},
				{"imported-wrong-password", "imported", password + "x", "imported", apierror.CodeUnauthorized},
			} {
				b.Run(p.name, func(b *testing.B) {
					for range b.N {
						err := c.PublishChallenge(context.Background(), ChallengeUpdate{User: p.user, Key: p.key,
							Subdomain: p.sub, TXT: value, From: netip.MustParseAddr("192.0.2.7")})
						if e, _ := apierror.As(err); (p.code == "" && err != nil) || (p.code != "" && (e == nil || e.Code != p.code)) {
							b.Fatalf("%s: %v, want %q", p.name, err, p.code)
						}
					}
				})
			}
		})
	}
}

// benchCertificates serves registrations under auth.example.org from a
// fresh store of d, on a clock the caller moves (ns since the start).
func benchCertificates(b *testing.B, d storage.Dialect) (*Certificates, *atomic.Int64) {
	b.Helper()
	st := storagetest.Open(b, d)
	hs := New(st, Config{Profile: 1}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	start, clock := time.Now(), new(atomic.Int64)
	hs.now = func() time.Time { return start.Add(time.Duration(clock.Load())) }
	// An allowance no caller reaches: the rules' cost, not the limit, is measured.
	c := NewCertificates(hs, nil, 1<<30).WithACMEDNS("auth.example.org")
	return c, clock
}
