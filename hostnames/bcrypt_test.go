package hostnames

import (
	"context"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"golang.org/x/crypto/bcrypt"
)

// The dummy hash costs what acme-dns's hashes cost (less with the race
// detector: bcrypt_cost_race.go), and matches nothing.
func TestDummyHash(t *testing.T) {
	t.Parallel()
	want := 10
	if raceBuild {
		want = 5
	}
	if cost, err := bcrypt.Cost([]byte(dummyHash)); err != nil || cost != want {
		t.Fatalf("dummyHash cost %d (%v), want %d", cost, err, want)
	}
	for _, p := range []string{"", "password", dummyHash} {
		if ok, err := newBcryptGate().compare(context.Background(), dummyHash, p); ok || err != nil {
			t.Fatalf("dummyHash matched %q (%v)", p, err)
		}
	}
}

// A comparison that finds every slot busy waits its while, then is refused
// 503 with Retry-After; one whose caller gives up ends with its context.
func TestBcryptGateFull(t *testing.T) {
	t.Parallel()
	g := &bcryptGate{slots: make(chan struct{}, 1), wait: 50 * time.Millisecond}
	g.slots <- struct{}{} // the one slot, busy
	start := time.Now()
	_, err := g.compare(context.Background(), dummyHash, "x")
	p, ok := apierror.As(err)
	if !ok || p.Code != apierror.CodeUnavailable || p.RetryAfter != time.Second {
		t.Fatalf("compare with every slot busy: %v, want SERVICE_UNAVAILABLE with Retry-After 1 s", err)
	}
	if waited := time.Since(start); waited < g.wait {
		t.Fatalf("refused after %v, want a wait of %v first", waited, g.wait)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.wait = time.Minute
	if _, err := g.compare(ctx, dummyHash, "x"); err != context.Canceled {
		t.Fatalf("compare for a caller gone: %v, want context.Canceled", err)
	}
	<-g.slots // freed: the next one compares
	if ok, err := g.compare(context.Background(), dummyHash, "x"); ok || err != nil || len(g.slots) != 0 {
		t.Fatalf("compare with a free slot: %v %v, %d slots still held", ok, err, len(g.slots))
	}
}
