// Package rrl limits the responses a network gets from the server a
// second (response_rate_limit), as BIND's and Knot's RRL count.
package rrl

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

// Class is what kind of response one is, each with its own limit.
type Class uint8

// The classes of responses.
const (
	Answer   Class = iota // qname and type (NODATA too)
	NXDomain              // the zone
	Error                 // REFUSED, SERVFAIL, FORMERR, NOTIMP
	classes
)

// shards and perShard bound the limiter's memory: past perShard keys in
// a shard, the idle ones are swept.
const (
	shards   = 64
	perShard = 4096
)

// Limiter is one server block's response_rate_limit.
type Limiter struct {
	rates  [classes]float64 // responses a second per network, by class
	slip   int              // every slip-th refused answer is truncated; 0: all dropped
	now    func() time.Time
	shards [shards]shard
}

// key is what a response is counted under.
type key struct {
	net   netip.Prefix
	class Class
	qtype uint16
	name  string // lowercase: the qname (answers), the zone (NXDOMAIN), "" (errors)
}

type shard struct {
	mu      sync.Mutex
	buckets map[key]*bucket
}

type bucket struct {
	tokens  float64
	last    time.Time
	refused int
}

// New limits responses a second, nxdomains and errors a second each (0:
// as responses); every slip-th refused one is sent truncated (0: none).
func New(responses, nxdomains, errors, slip int) *Limiter {
	r := &Limiter{slip: slip, now: time.Now}
	r.rates[Answer] = float64(responses)
	for class, n := range map[Class]int{NXDomain: nxdomains, Error: errors} {
		r.rates[class] = float64(cmp.Or(n, responses))
	}
	for i := range r.shards {
		r.shards[i].buckets = map[key]*bucket{}
	}
	return r
}

// Verdict is what becomes of a response.
type Verdict int

// The verdicts.
const (
	Send Verdict = iota
	Slip         // send it truncated and empty
	Drop
)

var seed = maphash.MakeSeed()

// Take takes a response of class (name and qtype as key has them) from
// client's network's allowance. name must be the caller's to give.
func (r *Limiter) Take(client netip.Addr, class Class, name string, qtype uint16) Verdict {
	client = client.Unmap()
	bits := 24
	if client.Is6() {
		bits = 56
	}
	p, err := client.Prefix(bits)
	if err != nil {
		return Send
	}
	k := key{net: p, class: class, qtype: qtype, name: name}
	rate := r.rates[class]
	s := &r.shards[maphash.Comparable(seed, k)%shards]
	now := r.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[k]
	if b == nil {
		if len(s.buckets) >= perShard {
			r.sweep(s, now)
		}
		b = &bucket{tokens: rate, last: now}
		s.buckets[k] = b
	}
	b.tokens = min(rate, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return Send
	}
	b.refused++
	if r.slip > 0 && b.refused%r.slip == 0 {
		return Slip
	}
	return Drop
}

// sweep drops the keys whose allowance is full again: they hold nothing a
// new bucket would not.
func (r *Limiter) sweep(s *shard, now time.Time) {
	for k, b := range s.buckets {
		rate := r.rates[k.class]
		if b.tokens+now.Sub(b.last).Seconds()*rate >= rate {
			delete(s.buckets, k)
		}
	}
}
