package hostname

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// Response rate limiting (response_rate_limit): over UDP, where a source
// address can be forged, a client network gets at most rate answers a
// second from this server (a burst of as many). Past it, every slip-th
// refused answer goes out truncated and empty, so that a real client asks
// again over TCP, which cannot be forged; the rest are dropped. The
// server then cannot be made to send a victim more than rate answers a
// second, whatever the attacker sends it. TCP is never limited.
//
// Networks are IPv4 /24 and IPv6 /56, as in BIND's and Knot's RRL: one
// attacker does not get a fresh allowance per address of its network.

// rrlShards and rrlPerShard bound the limiter's memory: past rrlPerShard
// networks in a shard, the idle ones are swept.
const (
	rrlShards   = 64
	rrlPerShard = 4096
)

type rrl struct {
	rate   float64 // answers a second per network
	slip   int     // every slip-th refused answer is truncated; 0: all dropped
	now    func() time.Time
	shards [rrlShards]rrlShard
}

type rrlShard struct {
	mu      sync.Mutex
	buckets map[netip.Prefix]*rrlBucket
}

type rrlBucket struct {
	tokens  float64
	last    time.Time
	refused int
}

func newRRL(rate, slip int) *rrl {
	r := &rrl{rate: float64(rate), slip: slip, now: time.Now}
	for i := range r.shards {
		r.shards[i].buckets = map[netip.Prefix]*rrlBucket{}
	}
	return r
}

// The verdicts of an answer.
const (
	rrlSend = iota
	rrlSlip // send it truncated and empty
	rrlDrop
)

var rrlSeed = maphash.MakeSeed()

// verdict takes an answer from client's network's allowance.
func (r *rrl) verdict(client netip.Addr) int {
	client = client.Unmap()
	bits := 24
	if client.Is6() {
		bits = 56
	}
	p, err := client.Prefix(bits)
	if err != nil {
		return rrlSend
	}
	s := &r.shards[maphash.Comparable(rrlSeed, p)%rrlShards]
	now := r.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[p]
	if b == nil {
		if len(s.buckets) >= rrlPerShard {
			r.sweep(s, now)
		}
		b = &rrlBucket{tokens: r.rate, last: now}
		s.buckets[p] = b
	}
	b.tokens = min(r.rate, b.tokens+now.Sub(b.last).Seconds()*r.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return rrlSend
	}
	b.refused++
	if r.slip > 0 && b.refused%r.slip == 0 {
		return rrlSlip
	}
	return rrlDrop
}

// sweep drops the networks whose allowance is full again: they hold
// nothing a new bucket would not.
func (r *rrl) sweep(s *rrlShard, now time.Time) {
	for p, b := range s.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*r.rate >= r.rate {
			delete(s.buckets, p)
		}
	}
}
