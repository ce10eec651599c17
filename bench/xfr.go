package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// xfrRun is what zone transfers cost at one size: the AXFR of the whole
// zone (time, records, the server's resident memory before and at its
// highest during it), and the IXFR delay after a write.
type xfrRun struct {
	axfr             time.Duration
	records          int
	rssBefore, rssAt float64 // MiB
	ixfr             latencies
}

// transferCorefile is pgCorefile's server with the transfer plugin on,
// NOTIFYing a secondary at notifyPort.
func transferCorefile(corefile func(d, a int, dir string) string, notifyPort int) func(d, a int, dir string) string {
	return func(d, a int, dir string) string {
		text := corefile(d, a, dir)
		block := fmt.Sprintf("    transfer {\n        to 127.0.0.1:%d\n    }\n}\n", notifyPort)
		return strings.TrimSuffix(strings.TrimRight(text, "\n"), "}") + block
	}
}

// measureXFR starts a server with transfers on, takes the zone whole, then
// plays a secondary: after each of n updates through the API it waits for
// the NOTIFY and asks for an IXFR from the serial it holds, timing from
// the API's 200 until the IXFR holds the new address.
func measureXFR(bin, dir string, corefile func(d, a int, dir string) string, n int) (xfrRun, error) {
	var r xfrRun
	port, notified, stopSecondary, err := fakeSecondary()
	if err != nil {
		return r, err
	}
	defer stopSecondary()

	s, err := start(bin, dir, transferCorefile(corefile, port))
	if err != nil {
		return r, err
	}
	defer s.stop()
	addr := fmt.Sprintf("127.0.0.1:%d", s.dns)

	r.rssBefore, _ = s.rss()
	peak := peakRSS(s)
	t0 := time.Now()
	m := new(dns.Msg)
	m.SetAxfr(zone + ".")
	env, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		peak()
		return r, err
	}
	var serial uint32
	for e := range env {
		if e.Error != nil {
			peak()
			return r, e.Error
		}
		r.records += len(e.RR)
		if soa, ok := e.RR[0].(*dns.SOA); ok && serial == 0 {
			serial = soa.Serial
		}
	}
	r.axfr = time.Since(t0)
	r.rssAt = peak()

	tok, err := s.adminToken()
	if err != nil {
		return r, err
	}
	c, err := newAccount(s, newClient(s, tok), "bench-xfr")
	if err != nil {
		return r, err
	}
	var h struct{ ID, Hostname string }
	if err := c.call("POST", "/api/v1/hostnames", map[string]string{"ip": publicAddr(98, 0, 0)}, 201, &h); err != nil {
		return r, err
	}
	ds := make([]time.Duration, 0, n)
	wall := time.Now()
	for i := range n {
		for len(notified) > 0 {
			<-notified
		}
		if serial, err = currentSerial(addr); err != nil {
			return r, err
		}
		ip := publicAddr(98, i+1, 0)
		if err := c.call("PUT", "/api/v1/hostnames/"+h.ID, map[string]string{"ip": ip}, 200, nil); err != nil {
			return r, err
		}
		at := time.Now()
		for {
			select {
			case <-notified:
			case <-time.After(5 * time.Second):
				return r, fmt.Errorf("no NOTIFY within 5 s of update %d", i)
			}
			if got, err := ixfrHolds(addr, serial, h.Hostname, ip); err != nil {
				return r, err
			} else if got {
				break
			}
		}
		ds = append(ds, time.Since(at))
	}
	r.ixfr = summarise(ds, time.Since(wall))
	return r, nil
}

func currentSerial(addr string) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(zone+".", dns.TypeSOA)
	a, err := dns.Exchange(m, addr)
	if err != nil {
		return 0, err
	}
	for _, rr := range a.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA for %s", zone)
}

// ixfrHolds asks for the IXFR from serial and reports whether it adds ip
// at name.
func ixfrHolds(addr string, serial uint32, name, ip string) (bool, error) {
	m := new(dns.Msg)
	m.SetIxfr(zone+".", serial, "ns1."+zone+".", "hostmaster."+zone+".")
	env, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		return false, err
	}
	found := false
	for e := range env {
		if e.Error != nil {
			return false, e.Error
		}
		for _, rr := range e.RR {
			if a, ok := rr.(*dns.A); ok && strings.EqualFold(a.Hdr.Name, name+".") && a.A.String() == ip {
				found = true
			}
		}
	}
	return found, nil
}
