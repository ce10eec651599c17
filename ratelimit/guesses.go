package ratelimit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/apierror"
)

// Guesses throttles the guessing of a secret (the admin token): a source
// that fails MaxGuesses times within GuessWindow is refused until that
// window ends, whatever it sends. It counts in memory, on this node: a
// guesser spread over several nodes gets MaxGuesses a window from each,
// still nothing against a 32-character token.
type Guesses struct {
	mu      sync.Mutex
	windows map[string]*guessWindow
	now     func() time.Time
	failed  atomic.Int64
	refused atomic.Int64
}

type guessWindow struct {
	start time.Time
	n     int
}

// The admin token's allowance: enough for a person's typos, too few for a
// script.
const (
	MaxGuesses  = 10
	GuessWindow = time.Minute
	// guessSources bounds the memory a flood from many addresses can take:
	// past it, windows that ended are swept.
	guessSources = 10_000
)

// NewGuesses makes an empty throttle.
func NewGuesses() *Guesses {
	return &Guesses{windows: map[string]*guessWindow{}, now: time.Now}
}

// Blocked reports whether source is refused now, and for how long yet.
func (g *Guesses) Blocked(source string) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.windows[source]
	if w == nil || w.n < MaxGuesses {
		return 0, false
	}
	left := GuessWindow - g.now().Sub(w.start)
	if left <= 0 {
		delete(g.windows, source)
		return 0, false
	}
	g.refused.Add(1)
	return left, true
}

// Failed counts a wrong guess from source.
func (g *Guesses) Failed(source string) {
	g.failed.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	w := g.windows[source]
	if w == nil || now.Sub(w.start) >= GuessWindow {
		if len(g.windows) >= guessSources {
			g.sweep(now)
		}
		w = &guessWindow{start: now}
		g.windows[source] = w
	}
	w.n++
}

func (g *Guesses) sweep(now time.Time) {
	for k, w := range g.windows {
		if now.Sub(w.start) >= GuessWindow {
			delete(g.windows, k)
		}
	}
}

// Failures and Refusals are the wrong guesses counted and the requests
// refused for them, since the start (the metrics).
func (g *Guesses) Failures() int64 { return g.failed.Load() }
func (g *Guesses) Refusals() int64 { return g.refused.Load() }

// GuessRefusal is the 429 a blocked source gets: RATE_LIMITED with Retry-After.
func GuessRefusal(left time.Duration) *apierror.Error {
	secs := max(1, int((left+time.Second-1)/time.Second))
	e := apierror.RateLimited("too many wrong admin tokens from this address: try again in %d s", secs)
	e.RetryAfter = time.Duration(secs) * time.Second
	return e
}
