package main

import (
	"fmt"
	"time"
)

// propagation updates hostnames on node a n times and measures, for each,
// the time from a's 200 until node b answers the new address (b polls
// nothing itself: it hears the change through the store's feed).
func propagation(a, b *server, n int) (latencies, error) {
	tok, err := a.adminToken()
	if err != nil {
		return latencies{}, err
	}
	c, err := newAccount(a, newClient(a, tok), "bench-propagation")
	if err != nil {
		return latencies{}, err
	}
	type host struct{ ID, Hostname string }
	hs := make([]host, 10)
	for i := range hs {
		if err := c.call("POST", "/api/v1/hostnames", map[string]string{"ip": publicAddr(99, i, 0)}, 201, &hs[i]); err != nil {
			return latencies{}, err
		}
	}
	ds := make([]time.Duration, 0, n)
	t0 := time.Now()
	for i := range n {
		h := hs[i%len(hs)]
		ip := publicAddr(100, i, 0)
		if err := c.call("PUT", "/api/v1/hostnames/"+h.ID, map[string]string{"ip": ip}, 200, nil); err != nil {
			return latencies{}, err
		}
		at := time.Now()
		for b.lookup(h.Hostname) != ip {
			if time.Since(at) > 10*time.Second {
				return latencies{}, fmt.Errorf("node B did not answer %s with %s within 10 s", h.Hostname, ip)
			}
			time.Sleep(100 * time.Microsecond)
		}
		ds = append(ds, time.Since(at))
	}
	return summarise(ds, time.Since(t0)), nil
}
