package ratelimit

import (
	"github.com/hostmint/hostmint/apierror"
	"testing"
	"time"
)

func TestGuesses(t *testing.T) {
	t.Parallel()
	g := NewGuesses()
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	for i := range MaxGuesses {
		if _, blocked := g.Blocked("a"); blocked {
			t.Fatalf("blocked after %d wrong guesses", i)
		}
		g.Failed("a")
	}
	left, blocked := g.Blocked("a")
	if !blocked || left != GuessWindow {
		t.Fatalf("after %d wrong guesses: blocked %v for %v, want a whole window", MaxGuesses, blocked, left)
	}
	if _, blocked := g.Blocked("b"); blocked {
		t.Errorf("another address is blocked too")
	}
	now = now.Add(GuessWindow - time.Second)
	if left, blocked := g.Blocked("a"); !blocked || left != time.Second {
		t.Errorf("a second before the window ends: blocked %v for %v", blocked, left)
	}
	now = now.Add(time.Second)
	if _, blocked := g.Blocked("a"); blocked {
		t.Errorf("still blocked once the window ended")
	}
	if g.Failures() != MaxGuesses || g.Refusals() != 2 {
		t.Errorf("failures %d, refusals %d; want %d and 2", g.Failures(), g.Refusals(), MaxGuesses)
	}
	if e := GuessRefusal(1500 * time.Millisecond); e.Code != apierror.CodeRateLimited || e.RetryAfter != 2*time.Second {
		t.Errorf("refusal: %s, retry after %s", e.Code, e.RetryAfter)
	}
	// A flood from many addresses is swept, not kept.
	for i := range guessSources + 10 {
		g.Failed(string(rune(i)))
		now = now.Add(GuessWindow / guessSources * 2)
	}
	if len(g.windows) > guessSources {
		t.Errorf("%d windows kept, bound %d", len(g.windows), guessSources)
	}
}
