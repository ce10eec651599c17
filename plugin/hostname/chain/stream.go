package chain

import (
	"runtime"

	"github.com/miekg/dns"
)

// Zone is a zone as a signed transfer reads it: its names in the chain's
// order (by Denial.Key).
type Zone interface {
	Len() int
	Key(i int) string
	// RRs are what the i-th name holds, grouped by type; none for an
	// empty non-terminal, which only an NSEC3 chain has a place for.
	RRs(i int) []dns.RR
}

// chunk is how many owners a worker signs at a time, and how many go to
// the transfer together.
const chunk = 256

// Stream sends z signed, name by name in the chain's order (every RRset
// with its RRSIG, every name with its NSEC or NSEC3 and RRSIG), in
// batches, to send. Workers sign chunks of owners on every core while the batches go
// out in order; a few chunks are held at most, so a million-name zone is
// never held whole, signed.
func (s *Signer) Stream(z Zone, d Denial, ttl uint32, hour int64, send func([]dns.RR)) error {
	n := z.Len()
	type result struct {
		rrs []dns.RR
		err error
	}
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan func(), workers)
	pending := make(chan chan result, 2*workers)
	done := make(chan struct{})
	defer close(done)
	for range workers {
		go func() {
			for job := range jobs {
				job()
			}
		}()
	}
	go func() {
		defer close(jobs)
		defer close(pending)
		var (
			owners []int      // the chunk's owners that hold something
			rrsets [][]dns.RR // and what they hold
		)
		flush := func(nextKey string) bool {
			os, sets := owners, rrsets
			out := make(chan result, 1)
			select {
			case pending <- out:
			case <-done:
				return false
			}
			jobs <- func() {
				var r result
				for k, i := range os {
					next := nextKey
					if k+1 < len(os) {
						next = z.Key(os[k+1])
					}
					if r.rrs, r.err = s.Owner(r.rrs, sets[k], d, z.Key(i), next, ttl, hour); r.err != nil {
						break
					}
				}
				out <- r
			}
			owners, rrsets = nil, nil
			return true
		}
		for i := range n {
			rrs := z.RRs(i)
			if len(rrs) == 0 && !d.NSEC3 {
				continue
			}
			if len(owners) == chunk {
				// The chunk's last name links to this one.
				if !flush(z.Key(i)) {
					return
				}
			}
			owners, rrsets = append(owners, i), append(rrsets, rrs)
		}
		if len(owners) > 0 {
			// The last links back to the first, a member always: the apex
			// (NSEC), or any name (NSEC3).
			flush(z.Key(0))
		}
	}()
	var err error
	for out := range pending {
		r := <-out
		if err == nil && r.err != nil {
			err = r.err
		}
		if err == nil {
			send(r.rrs)
		}
	}
	return err
}
