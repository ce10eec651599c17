package pipeline

import (
	"context"
	"sync"
)

// Pipeline gathers writes into batches, in lanes. W is what a write is to
// the runner, R its answer.
type Pipeline[W, R any] struct {
	max   int
	run   func(batch []*Part[W, R])
	mu    sync.Mutex
	lanes []lane[W, R]
	keys  map[string]*inFlight[W, R] // the keys with a write queued or running
}

// inFlight is a key's lane while it has writes queued or running, and how
// many.
type inFlight[W, R any] struct {
	lane *lane[W, R]
	n    int
}

// lane is one lane's writes waiting for the batch after the one running
// (running is false when none runs).
type lane[W, R any] struct {
	running bool
	waiting []*Part[W, R]
}

// Part is one write in a lane.
type Part[W, R any] struct {
	Ctx   context.Context // the caller's
	Write W
	done  chan R
	// taken (under the pipeline's lock) once a batch has the part: from
	// then on its caller waits for the answer even if it stops waiting
	// for the write, so that nothing it shares with the write is touched
	// after it returned. gone: the caller left before that; the part is
	// never run.
	taken, gone bool
}

// Answer tells the part's caller its answer. The runner answers every
// part of a batch it was given, once.
func (p *Part[W, R]) Answer(r R) { p.done <- r }

// New is a pipeline of lanes lanes whose batches hold up to size writes
// and are run by run, one batch of a lane after the other.
func New[W, R any](lanes, size int, run func(batch []*Part[W, R])) *Pipeline[W, R] {
	return &Pipeline[W, R]{max: max(size, 1), run: run, lanes: make([]lane[W, R], max(lanes, 1)), keys: map[string]*inFlight[W, R]{}}
}

// Lanes is how many lanes the pipeline has.
func (p *Pipeline[W, R]) Lanes() int { return len(p.lanes) }

// enter is key's lane for one more write: the lane of its writes queued
// or running, so that they keep their order; else the first lane with
// room in its next batch, so that writes fill one batch before they open
// another (a batch's commit costs the same however many it holds); else
// the lane with the fewest waiting.
func (p *Pipeline[W, R]) enter(key string) *lane[W, R] {
	f := p.keys[key]
	if f == nil {
		f = &inFlight[W, R]{lane: &p.lanes[0]}
		for i := range p.lanes {
			l := &p.lanes[i]
			if len(l.waiting) < p.max {
				f.lane = l
				break
			}
			if len(l.waiting) < len(f.lane.waiting) {
				f.lane = l
			}
		}
		p.keys[key] = f
	}
	f.n++
	return f.lane
}

// leave ends one of key's writes (under p.mu).
func (p *Pipeline[W, R]) leave(key string) {
	if f := p.keys[key]; f != nil {
		if f.n--; f.n == 0 {
			delete(p.keys, key)
		}
	}
}

// Do queues w in key's lane and waits for its answer. ok is false when ctx
// ended before a batch took it: it was never run.
func (p *Pipeline[W, R]) Do(ctx context.Context, key string, w W) (r R, ok bool) {
	part := &Part[W, R]{Ctx: ctx, Write: w, done: make(chan R, 1)}
	p.mu.Lock()
	l := p.enter(key)
	l.waiting = append(l.waiting, part)
	if !l.running {
		l.running = true
		go p.drain(l)
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.leave(key)
		p.mu.Unlock()
	}()
	select {
	case r = <-part.done:
		return r, true
	case <-ctx.Done():
	}
	p.mu.Lock()
	if !part.taken {
		part.gone = true
		p.mu.Unlock()
		return r, false
	}
	p.mu.Unlock()
	return <-part.done, true // running: the runner answers it
}

// drain runs l's batches until none waits, one after the other: a batch
// gathers the writes that arrive while the one before runs.
func (p *Pipeline[W, R]) drain(l *lane[W, R]) {
	for {
		p.mu.Lock()
		var batch []*Part[W, R]
		for len(l.waiting) > 0 && len(batch) < p.max {
			part := l.waiting[0]
			l.waiting[0] = nil
			l.waiting = l.waiting[1:]
			if !part.gone {
				part.taken = true
				batch = append(batch, part)
			}
		}
		if len(batch) == 0 {
			l.running = false
			l.waiting = nil
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.run(batch)
	}
}
