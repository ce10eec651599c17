package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// The fake secondary of -signed (signed.go): AXFRs counted as they are
// read, IXFRs after writes checked for the new address signed.

// fakeSecondary listens for NOTIFYs and answers them, for measureXFR and
// -signed; notified holds one signal however many came.
func fakeSecondary() (port int, notified chan struct{}, stop func(), err error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, nil, err
	}
	notified = make(chan struct{}, 1)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, m *dns.Msg) {
		if m.Opcode == dns.OpcodeNotify {
			select {
			case notified <- struct{}{}:
			default:
			}
		}
		a := new(dns.Msg)
		a.SetReply(m)
		w.WriteMsg(a)
	})}
	go srv.ActivateAndServe()
	return pc.LocalAddr().(*net.UDPAddr).Port, notified, func() { srv.Shutdown() }, nil
}

// axfrUntil asks s for the zone until a complete AXFR comes (a signed one
// when signed: one asked too early may still be unsigned, or refused
// while the index loads) and times it from since. When signed it asks
// once the SOA is answered signed: an unsigned AXFR of a million names
// taken meanwhile would be seconds timed that signing did not cost.
// Between tries it waits a little, as a secondary retrying would, but not
// for a NOTIFY: the chain's cost is what is timed, not the NOTIFY's.
func axfrUntil(s *server, since time.Time, signed bool) (take, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns))
	cpu0, own0 := s.cpu(), ownCPU()
	for signed && !soaSigned(addr) && time.Since(since) < 10*time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	for tries := 1; ; tries++ {
		t, err := axfr(addr)
		if err == nil && (t.sigs > 0) == signed {
			t.d, t.cpu, t.ownCPU, t.tries = time.Since(since), s.cpu()-cpu0, ownCPU()-own0, tries
			if signed && t.sigs != t.sets-1 { // every RRset signed once; the frame's two SOAs, one RRSIG
				return t, fmt.Errorf("signed AXFR: %d RRSIGs over %d RRsets", t.sigs, t.sets-1)
			}
			return t, nil
		}
		if time.Since(since) > 10*time.Minute {
			return t, fmt.Errorf("no complete AXFR (signed %v) within 10 minutes (last: %v)", signed, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// soaSigned reports whether the zone's SOA comes signed to a query with
// the DO bit.
func soaSigned(addr string) bool {
	m := new(dns.Msg)
	m.SetQuestion(zone+".", dns.TypeSOA)
	m.SetEdns0(1232, true)
	a, err := dns.Exchange(m, addr)
	if err != nil {
		return false
	}
	for _, rr := range a.Answer {
		if _, ok := rr.(*dns.RRSIG); ok {
			return true
		}
	}
	return false
}

// ownCPU is the CPU time this process has used: a signed AXFR's records
// are parsed here on the same two cores the server signs on.
func ownCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// axfr takes the zone whole over TCP, counting as it reads: a million
// signed names are never held in the bench.
func axfr(addr string) (t take, err error) {
	m := new(dns.Msg)
	m.SetAxfr(zone + ".")
	// The first message of a signed AXFR waits for its names to be
	// ordered: longer than the default 2 s at a million.
	env, err := (&dns.Transfer{ReadTimeout: 2 * time.Minute}).In(m, addr)
	if err != nil {
		return t, err
	}
	var owner string
	var typ uint16
	for e := range env {
		if e.Error != nil {
			err = e.Error
			continue // drain
		}
		for _, rr := range e.RR {
			t.records++
			h := rr.Header()
			switch x := rr.(type) {
			case *dns.RRSIG:
				t.sigs++
				continue
			case *dns.DNSKEY:
				t.keys = append(t.keys, x)
			}
			if h.Name != owner || h.Rrtype != typ {
				t.sets++
				owner, typ = h.Name, h.Rrtype
			}
		}
	}
	return t, err
}

// peakRSS samples s's resident memory every 5 ms until the function
// returned is called, which returns the highest (MiB): the process's VmHWM
// would be start-up's peak as often as the transfer's.
func peakRSS(s *server) func() float64 {
	stop, done := make(chan struct{}), make(chan float64)
	go func() {
		var peak float64
		for {
			if now, _ := s.rss(); now > peak {
				peak = now
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() float64 { close(stop); return <-done }
}

// ixfrDelays repoints one hostname signedUpdates times through the API and
// times each from the 200 until an IXFR from the serial held before it
// adds the new address with a valid RRSIG over it.
func ixfrDelays(r *signedRun, c *apiClient, addr string, notified chan struct{}) error {
	var h struct{ ID, Hostname string }
	if err := c.call("POST", "/api/v1/hostnames", map[string]string{"ip": publicAddr(97, 0, 0)}, 201, &h); err != nil {
		return err
	}
	ds, alone := make([]time.Duration, 0, signedUpdates), make([]time.Duration, 0, signedUpdates)
	wall := time.Now()
	for i := range signedUpdates {
		serial, err := currentSerial(addr)
		if err != nil {
			return err
		}
		select { // a NOTIFY of an earlier write is not this one's
		case <-notified:
		default:
		}
		ip := publicAddr(97, i+1, 0)
		if err := c.call("PUT", "/api/v1/hostnames/"+h.ID, map[string]string{"ip": ip}, 200, nil); err != nil {
			return err
		}
		at := time.Now()
		select {
		case <-notified:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("no NOTIFY within 10 s of update %d", i)
		}
		// After the NOTIFY, asked again until held: a secondary would wait
		// for the next NOTIFY or its refresh, but the retries are counted.
		for {
			t := time.Now()
			held, whole, err := ixfrSigned(addr, serial, h.Hostname, ip, r.first.keys, &r.badSigs)
			if err != nil {
				return err
			}
			if whole {
				r.ixfrWhole++
			}
			if held {
				alone = append(alone, time.Since(t))
				break
			}
			if time.Since(at) > 10*time.Second {
				return fmt.Errorf("update %d: no IXFR held %s signed within 10 s", i, ip)
			}
			r.ixfrRetries++
			time.Sleep(5 * time.Millisecond)
		}
		ds = append(ds, time.Since(at))
	}
	r.ixfr, r.ixfrAlone = summarise(ds, time.Since(wall)), summarise(alone, time.Since(wall))
	return nil
}

// ixfrSigned asks for the IXFR from serial and reports whether what it
// adds holds ip at name with an RRSIG over that A RRset that verifies
// with one of keys. whole: the server answered with the whole zone.
func ixfrSigned(addr string, serial uint32, name, ip string, keys []*dns.DNSKEY, bad *int) (held, whole bool, err error) {
	m := new(dns.Msg)
	m.SetIxfr(zone+".", serial, "ns1."+zone+".", "hostmaster."+zone+".")
	env, err := (&dns.Transfer{ReadTimeout: 2 * time.Minute}).In(m, addr)
	if err != nil {
		return false, false, err
	}
	var (
		i, soas int
		as      []dns.RR
		sigs    []*dns.RRSIG
	)
	for e := range env {
		if e.Error != nil {
			err = e.Error
			continue
		}
		for _, rr := range e.RR {
			_, isSOA := rr.(*dns.SOA)
			if i == 1 {
				whole = !isSOA // IXFR's form has the old SOA second
			}
			i++
			if isSOA {
				soas++
				continue
			}
			// Additions follow the third SOA (the new one, again).
			if (!whole && soas < 3) || !strings.EqualFold(rr.Header().Name, name+".") {
				continue
			}
			switch x := rr.(type) {
			case *dns.A:
				as = append(as, x)
			case *dns.RRSIG:
				if x.TypeCovered == dns.TypeA {
					sigs = append(sigs, x)
				}
			}
		}
	}
	if err != nil {
		return false, whole, err
	}
	hasIP := false
	for _, a := range as {
		hasIP = hasIP || a.(*dns.A).A.String() == ip
	}
	if !hasIP {
		return false, whole, nil
	}
	for _, sig := range sigs {
		for _, k := range keys {
			if k.KeyTag() != sig.KeyTag {
				continue
			}
			if sig.Verify(k, as) == nil {
				return true, whole, nil
			}
			*bad++
		}
	}
	return false, whole, nil
}
