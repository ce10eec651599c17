package hostnames

import (
	"context"
	"runtime"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"golang.org/x/crypto/bcrypt"
)

// bcrypt comparisons are the one part of an acme-dns update that costs
// real CPU: about 60 ms at acme-dns's cost 10 (up to 200 ms on a busy
// 2-core machine). One is made for an imported password's first update
// and, so that a refusal takes as long whichever way it was refused, one
// against dummyHash for every other refusal of a credential (an unknown
// username included: its answer must not come sooner than a known one's).
// A node makes at most half its CPUs' worth at once, so that a flood of
// wrong passwords leaves the other half to DNS; a caller that finds every
// slot busy for bcryptWait is answered 503 with Retry-After.

// bcryptWait is how long a comparison waits for a slot: a few
// comparisons' time, so that a short burst of real updates gets through.
const bcryptWait = 500 * time.Millisecond

// bcryptGate bounds the comparisons a node makes at once.
type bcryptGate struct {
	slots chan struct{}
	wait  time.Duration
}

func newBcryptGate() *bcryptGate {
	return &bcryptGate{slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)), wait: bcryptWait}
}

// compare reports whether password is hash's, once a slot is free; a
// caller that waited g.wait in vain gets 503 SERVICE_UNAVAILABLE.
func (g *bcryptGate) compare(ctx context.Context, hash, password string) (bool, error) {
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
	case <-timer.C:
		e := apierror.Unavailable("too many acme-dns passwords are being checked on this node; retry in a second")
		e.RetryAfter = time.Second
		return false, e
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-g.slots }()
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil, nil
}
