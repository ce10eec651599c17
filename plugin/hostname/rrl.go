package hostname

import (
	"cmp"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// Response rate limiting (response_rate_limit), as BIND's and Knot's RRL
// count: over UDP, where a source address can be forged, a client network
// gets at most so many of the same response a second from this server (a
// burst of as many). Past it, every slip-th refused answer goes out
// truncated and empty, so that a real client asks again over TCP, which
// cannot be forged; the rest are dropped. The server then cannot be made
// to send a victim more than the limit a second, whatever the attacker
// sends it. TCP is never limited.
//
// A response is counted with its client's network (IPv4 /24, IPv6 /56:
// one attacker does not get a fresh allowance per address) and with what
// it is: an answer with its qname and type, a name that does not exist
// with its zone (random names share one allowance), an error or refusal
// in one allowance of its own. So a flood of random names from a network
// does not use up the allowance of a resolver there asking for real ones,
// and each class has its limit (responses, nxdomains, errors per second).

// The classes of responses, each with its own limit.
const (
	rrlAnswer   = iota // qname and type (NODATA too)
	rrlNXDomain        // the zone
	rrlError           // REFUSED, SERVFAIL, FORMERR, NOTIMP
	rrlClasses
)

// rrlShards and rrlPerShard bound the limiter's memory: past rrlPerShard
// keys in a shard, the idle ones are swept.
const (
	rrlShards   = 64
	rrlPerShard = 4096
)

type rrl struct {
	rates  [rrlClasses]float64 // responses a second per network, by class
	slip   int                 // every slip-th refused answer is truncated; 0: all dropped
	now    func() time.Time
	shards [rrlShards]rrlShard
}

// rrlKey is what a response is counted under.
type rrlKey struct {
	net   netip.Prefix
	class uint8
	qtype uint16
	name  string // lowercase: the qname (answers), the zone (NXDOMAIN), "" (errors)
}

type rrlShard struct {
	mu      sync.Mutex
	buckets map[rrlKey]*rrlBucket
}

type rrlBucket struct {
	tokens  float64
	last    time.Time
	refused int
}

// newRRL limits responses a second, nxdomains and errors a second each
// (0: as responses).
func newRRL(responses, nxdomains, errors, slip int) *rrl {
	r := &rrl{slip: slip, now: time.Now}
	r.rates[rrlAnswer] = float64(responses)
	for class, n := range map[int]int{rrlNXDomain: nxdomains, rrlError: errors} {
		r.rates[class] = float64(cmp.Or(n, responses))
	}
	for i := range r.shards {
		r.shards[i].buckets = map[rrlKey]*rrlBucket{}
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

// verdict takes a response of class (name and qtype as rrlKey has them)
// from client's network's allowance.
func (r *rrl) verdict(client netip.Addr, class int, name string, qtype uint16) int {
	client = client.Unmap()
	bits := 24
	if client.Is6() {
		bits = 56
	}
	p, err := client.Prefix(bits)
	if err != nil {
		return rrlSend
	}
	k := rrlKey{net: p, class: uint8(class), qtype: qtype, name: name}
	rate := r.rates[class]
	s := &r.shards[maphash.Comparable(rrlSeed, k)%rrlShards]
	now := r.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[k]
	if b == nil {
		if len(s.buckets) >= rrlPerShard {
			r.sweep(s, now)
		}
		b = &rrlBucket{tokens: rate, last: now}
		s.buckets[k] = b
	}
	b.tokens = min(rate, b.tokens+now.Sub(b.last).Seconds()*rate)
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

// sweep drops the keys whose allowance is full again: they hold nothing a
// new bucket would not.
func (r *rrl) sweep(s *rrlShard, now time.Time) {
	for k, b := range s.buckets {
		rate := r.rates[k.class]
		if b.tokens+now.Sub(b.last).Seconds()*rate >= rate {
			delete(s.buckets, k)
		}
	}
}
