package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Graceful lifecycle (issue 9, item 7): the built binary stops on SIGTERM
// without dropping what it has started, and CoreDNS's reload plugin swaps in
// a changed Corefile without a failed query or API call.
//
// Helpers here are prefixed lifecycle so that they do not collide with
// those of other files of the package.

// lifecycleHeld is a create whose handler is running, blocked reading a
// body the client has not sent yet: the client sent its headers with
// "Expect: 100-continue" and net/http said "100 Continue", which it does
// only once the handler reads the body. It is in flight, for certain.
type lifecycleHeld struct {
	conn net.Conn
	rd   *bufio.Reader
	body []byte
}

func lifecycleHold(t *testing.T, addr, key string, body []byte) *lifecycleHeld {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /api/v1/hostnames HTTP/1.1\r\nHost: hostmint.test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, len(body))
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("waiting for 100 Continue: %q, %v", line, err)
	}
	if blank, err := rd.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", blank, err)
	}
	return &lifecycleHeld{conn: conn, rd: rd, body: body}
}

// finish sends the body and reads the answer to its end.
func (h *lifecycleHeld) finish() (status int, body []byte, err error) {
	defer h.conn.Close()
	if _, err := h.conn.Write(h.body); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(h.rd, nil)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// lifecycleIDs lists every hostname of key's account, page by page.
func (s *server) lifecycleIDs(t *testing.T, key string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for skip := 0; ; skip += 500 {
		l := s.withT(t).must(200, "GET", fmt.Sprintf("/api/v1/hostnames?limit=500&skip=%d", skip), key, nil)
		page := l.body["hostnames"].([]any)
		for _, h := range page {
			ids[h.(map[string]any)["id"].(string)] = true
		}
		if len(page) < 500 {
			return ids
		}
	}
}

// SIGTERM drains the API: requests in flight when it arrives are answered
// in full, and a crowd of clients creating hostnames through it sees either
// a complete answer or a connection the server never took (refused, or
// reset from the listen queue as the listener closes) - never a write done
// and its answer lost: every hostname in the store afterwards is one a
// client got its 201 for. The process exits 0 within a few seconds.
func TestLifecycleSIGTERMDrains(t *testing.T) {
	t.Parallel()
	s, p := spawn(t, options{})
	_, key := s.account("pro", 100000)
	addr := strings.TrimPrefix(s.api, "http://")
	create := func(label string) []byte {
		b, _ := json.Marshal(map[string]any{"ip": "198.41.0.4", "label": label})
		return b
	}

	// In flight, for certain: handlers running, waiting for their bodies.
	const held = 8
	var hold []*lifecycleHeld
	for i := range held {
		hold = append(hold, lifecycleHold(t, addr, key, create(fmt.Sprintf("held-%d", i))))
	}

	// The crowd: creates one after another, a connection each, until the
	// server stops taking connections.
	type outcome struct {
		status int
		id     string
		err    error
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		started  atomic.Int32
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				req, _ := http.NewRequest("POST", s.api+"/api/v1/hostnames", bytes.NewReader(create(fmt.Sprintf("crowd-%d-%d", w, i))))
				req.Header.Set("Authorization", "Bearer "+key)
				started.Add(1)
				resp, err := client.Do(req)
				o := outcome{err: err}
				if err == nil {
					var body []byte
					body, o.err = io.ReadAll(resp.Body)
					resp.Body.Close()
					o.status = resp.StatusCode
					var v map[string]any
					if o.err == nil {
						if jerr := json.Unmarshal(body, &v); jerr != nil {
							o.err = fmt.Errorf("answer %d is not JSON: %v: %q", resp.StatusCode, jerr, body)
						} else if resp.StatusCode >= 300 && (v["error"] == nil || v["code"] == nil) {
							o.err = fmt.Errorf("answer %d is not {error, code}: %s", resp.StatusCode, body)
						}
						o.id, _ = v["id"].(string)
					}
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if errors.Is(err, syscall.ECONNREFUSED) {
					return // the listener is closed: the server takes no more
				}
				if err != nil && i > 1000 {
					return // a backstop, should the server never stop
				}
			}
		})
	}
	eventually(t, 10*time.Second, func() bool { return started.Load() > 100 }, "the crowd never got going")

	t0 := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()

	// Shutdown closes the listener first; then the held requests get their
	// bodies, and their answers.
	eventually(t, 5*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, "the API still takes connections after SIGTERM")
	var answered []string
	for i, h := range hold {
		status, body, err := h.finish()
		var v map[string]any
		json.Unmarshal(body, &v)
		if err != nil || status != 201 || v["id"] == nil {
			t.Errorf("held request %d, in flight at SIGTERM: %d %q, %v", i, status, body, err)
			continue
		}
		answered = append(answered, v["id"].(string))
	}
	wg.Wait()

	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15s after SIGTERM:\n%s", p.output())
	}
	took := time.Since(t0)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0:\n%s", code, p.output())
	}
	if took > 5*time.Second {
		t.Errorf("SIGTERM to exit took %v", took)
	}
	if out := p.output(); strings.Contains(out, "[ERROR]") || strings.Contains(out, "panic") {
		t.Errorf("shutdown logged errors:\n%s", out)
	}

	counts := map[string]int{}
	for _, o := range outcomes {
		switch {
		case o.err == nil && o.status == 201 && o.id != "":
			counts["201"]++
			answered = append(answered, o.id)
		case o.err == nil:
			counts[fmt.Sprint(o.status)]++ // a JSON error: checked above
		case errors.Is(o.err, syscall.ECONNREFUSED):
			counts["refused"]++
		case errors.Is(o.err, syscall.ECONNRESET) || errors.Is(o.err, io.EOF):
			counts["reset before an answer"]++
		default:
			counts["other"]++
			t.Errorf("a crowd request failed: %v", o.err)
		}
	}
	t.Logf("SIGTERM to exit %v; crowd: %v", took.Round(time.Millisecond), counts)
	if counts["201"] == 0 {
		t.Errorf("no crowd request succeeded: %v", counts)
	}

	// The store holds exactly what clients were told was created.
	s2, _ := spawn(t, options{dir: s.dir, dsn: s.dsn})
	stored := s2.lifecycleIDs(t, key)
	for _, id := range answered {
		if !stored[id] {
			t.Errorf("hostname %s was answered 201 but is not in the store", id)
		}
		delete(stored, id)
	}
	for id := range stored {
		t.Errorf("hostname %s is in the store, but its client never got the 201", id)
	}
}

// Rewriting the Corefile under CoreDNS's reload plugin swaps the server
// without a failed query: DNS over UDP and TCP and the API are asked all
// along, every answer is right, the new address_ttl is served after the
// swap (and only it, once it settles), and the API keeps the same listener.
func TestLifecycleCorefileReload(t *testing.T) {
	t.Parallel()
	s, p, path := spawnEdited(t, options{}, func(c string) string {
		return strings.Replace(c, "  bind 127.0.0.1\n", "  bind 127.0.0.1\n  reload 2s 1s\n", 1)
	})
	_, key := s.account("pro", 100000)
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "steady"})
	const name = "steady.example.org."
	s.resolves(name, dns.TypeA, "198.41.0.4")

	type sample struct {
		at  time.Time
		ttl uint32
	}
	var (
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		mu       sync.Mutex
		samples  = map[string][]sample{}
		failures []string
		apiCalls atomic.Int32
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
		}
	}
	for _, proto := range []string{"udp", "tcp"} {
		wg.Go(func() {
			c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, _, err := c.Exchange(hostileQuery(name, dns.TypeA), s.dnsAddr)
				if err != nil && proto == "tcp" {
					// A connection the old server accepted just before it
					// stopped is closed under the query; a TCP client asks
					// again on a new one (RFC 7766 6.2.1), and that one must work.
					r, _, err = c.Exchange(hostileQuery(name, dns.TypeA), s.dnsAddr)
				}
				switch {
				case err != nil:
					fail("%s: %v", proto, err)
				case r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "198.41.0.4":
					fail("%s: %s %v", proto, dns.RcodeToString[r.Rcode], r.Answer)
				default:
					mu.Lock()
					samples[proto] = append(samples[proto], sample{time.Now(), r.Answer[0].Header().Ttl})
					mu.Unlock()
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	// The API: reads, and writes, through the same listener all along.
	wg.Go(func() {
		client := &http.Client{Timeout: 5 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			method, path, body := "GET", "/api/v1/hostnames/"+h.str("id"), ""
			if i%5 == 4 {
				method, path, body = "POST", "/api/v1/hostnames", fmt.Sprintf(`{"ip":"198.41.0.5","label":"during-%d"}`, i)
			}
			req, _ := http.NewRequest(method, s.api+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				fail("API %s %s: %v", method, path, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 && resp.StatusCode != 201 {
				fail("API %s %s: %d %s", method, path, resp.StatusCode, b)
			}
			apiCalls.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	})

	// A second of the old Corefile, then the new one, written whole (a
	// rename) so that the reload plugin never reads half of it.
	time.Sleep(time.Second)
	changed := strings.Replace(s.corefile, "    feed_poll 200ms\n", "    feed_poll 200ms\n    address_ttl 30\n", 1)
	if changed == s.corefile {
		t.Fatalf("no feed_poll line to add address_ttl after:\n%s", s.corefile)
	}
	if err := os.WriteFile(path+".new", []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	rewritten := time.Now()

	// The new TTL shows within the reload interval (2s, jitter 1s) and the
	// restart; then a second more of traffic on the new server.
	settled := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		var last time.Time
		for _, proto := range []string{"udp", "tcp"} {
			ss := samples[proto]
			if len(ss) == 0 || ss[len(ss)-1].ttl != 30 {
				return time.Time{}
			}
			if at := ss[len(ss)-1].at; at.After(last) {
				last = at
			}
		}
		return last
	}
	eventually(t, 20*time.Second, func() bool { return !settled().IsZero() },
		"address_ttl 30 is not served 20s after the Corefile changed:\n%s", p.output())
	swapped := time.Now()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	for _, f := range failures {
		t.Errorf("during the reload: %s", f)
	}
	for _, proto := range []string{"udp", "tcp"} {
		ss := samples[proto]
		var before, after, late60 int
		for _, x := range ss {
			switch {
			case x.at.Before(rewritten):
				before++
			case x.at.After(swapped):
				after++
				if x.ttl != 30 {
					late60++
				}
			}
		}
		t.Logf("%s: %d answers (%d before the rewrite, %d after the swap)", proto, len(ss), before, after)
		if before == 0 || after == 0 {
			t.Errorf("%s: %d answers before the rewrite and %d after the swap; the test did not watch both sides", proto, before, after)
		}
		if late60 > 0 {
			t.Errorf("%s: %d answers with the old TTL after the new one settled", proto, late60)
		}
	}
	t.Logf("swap %v after the rewrite; %d API calls", swapped.Sub(rewritten).Round(time.Millisecond), apiCalls.Load())
	out := p.output()
	if !strings.Contains(out, "Reloading complete") {
		t.Errorf("no reload logged:\n%s", out)
	}
	if strings.Contains(out, "[ERROR]") || strings.Contains(out, "address already in use") {
		t.Errorf("the reload logged errors:\n%s", out)
	}
	s.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil)
}
