package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// Hostile input (issue 9, item 5): what an attacker or a broken client
// sends to the API and to the DNS server.
//
// The API answers every request it can read with a 4xx and the spec's
// {error, code} body - never a 5xx, never a panic, never net/http's plain
// text - writes nothing for it, and cuts off a client too slow to finish its
// request within the configured timeouts. The DNS server answers only inside
// its zones (no open resolver), truncates over UDP rather than send more than
// the client takes or than a safe datagram holds, answers ANY minimally
// (RFC 8482), and does no database work for a name it does not hold.
//
// Helpers here are prefixed hostile so that they do not collide with those
// of other files of the package.

// The API's http.Server timeouts, as plugin/hostname/runtime.go sets them.
const (
	hostileReadHeaderTimeout = 5 * time.Second
	hostileReadTimeout       = 10 * time.Second
)

// hostileOverHeaders is past the header cap: adminapi.MaxHeaderBytes, and
// the 4KB net/http allows beyond it.
const hostileOverHeaders = adminapi.MaxHeaderBytes + 4<<10 + 1

// hostileHostPort is the API's address without the scheme.
func (s *server) hostileHostPort() string { return strings.TrimPrefix(s.api, "http://") }

// hostileRequest writes an HTTP/1.1 request by hand, so that it can carry
// what no client library sends: raw header lines (control characters,
// repeats, thousands of them) and bodies that lie about their length.
// Content-Length is added unless a header line sets it or Transfer-Encoding.
func hostileRequest(method, path string, lines []string, body string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: hostmint.test\r\nConnection: close\r\n", method, path)
	framed := false
	for _, l := range lines {
		b.WriteString(l + "\r\n")
		name, _, _ := strings.Cut(strings.ToLower(l), ":")
		framed = framed || name == "content-length" || name == "transfer-encoding"
	}
	if !framed {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	return b.Bytes()
}

// hostileExchange sends raw on a new connection and reads one answer. The
// request is written from another goroutine: a server that refuses a request
// answers before it has read all of it, and a client that waited to finish
// writing first would never see that answer.
func hostileExchange(addr string, raw []byte) (status int, h http.Header, body []byte, err error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, nil, nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	var wg sync.WaitGroup
	wg.Go(func() { conn.Write(raw) }) // an error here is the server hanging up, which the read reports
	defer wg.Wait()
	defer conn.Close() // before wg.Wait: unblocks a write the server stopped reading
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, body, fmt.Errorf("reading the answer's body: %w", err)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// hostileErrorShape fails unless an answer is the spec's error: JSON
// {error, code}, both non-empty strings and nothing else.
func hostileErrorShape(t testing.TB, what string, status int, h http.Header, body []byte) {
	t.Helper()
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: %d with Content-Type %q, not the JSON error shape: %q", what, status, ct, body)
		return
	}
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Errorf("%s: %d body is not a JSON object: %v: %q", what, status, err, body)
		return
	}
	msg, _ := e["error"].(string)
	code, _ := e["code"].(string)
	if len(e) != 2 || msg == "" || code == "" {
		t.Errorf("%s: %d body is not {error, code}: %s", what, status, body)
	}
	if !utf8.Valid(body) {
		t.Errorf("%s: %d body is not valid UTF-8: %q", what, status, body)
	}
}

// Bodies too big, too deep, not UTF-8, and header lines no client should
// send: each gets a 4xx (or, where the input is merely odd, the ordinary
// answer) with the JSON error shape, none writes anything, and the server
// keeps answering throughout.
func TestHostileHTTP(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	_, key := s.account("pro")
	addr := s.hostileHostPort()
	auth := "Authorization: Bearer " + key
	admin := "Authorization: Bearer " + s.admin
	pad := func(n int) string { return strings.Repeat("a", n) }
	create := func(extra string) string { return `{"ip":"198.41.0.4","label":"hostile-` + extra + `"}` }

	// chunked writes body as chunks of size bytes.
	chunked := func(body string, size int) string {
		var b strings.Builder
		for len(body) > 0 {
			n := min(size, len(body))
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
			body = body[n:]
		}
		return b.String() + "0\r\n\r\n"
	}
	many := func(n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}

	tests := []struct {
		name   string
		method string
		path   string
		lines  []string
		body   string
		status []int  // acceptable statuses; 2xx ones only where the input is merely odd
		msg    string // part of the error message, where it matters
	}{
		// Bodies over the spec's 4KB: refused whole, however they are framed.
		{"body just over 4KB", "POST", "/api/v1/hostnames", []string{auth}, create(pad(4097)), []int{400, 413}, ""},
		{"body of 8MB", "POST", "/api/v1/hostnames", []string{auth}, create(pad(8 << 20)), []int{400, 413}, ""},
		{"chunked body over 4KB", "POST", "/api/v1/hostnames", []string{auth, "Transfer-Encoding: chunked"},
			chunked(create(pad(6000)), 1000), []int{400, 413}, ""},
		{"admin body over 4KB", "POST", "/api/admin/accounts", []string{admin}, `{"name":"` + pad(5000) + `","plan":"free"}`, []int{400, 413}, ""},
		{"acme-dns body over 4KB", "POST", "/api/acme/update", []string{"X-Api-User: u", "X-Api-Key: k"},
			`{"subdomain":"x","txt":"` + pad(5000) + `"}`, []int{400, 401, 413}, ""},

		// Deep nesting: 100000 levels are over 4KB; 2000 fit, and must
		// neither exhaust the stack nor pass for an object.
		{"100000 [", "POST", "/api/v1/hostnames", []string{auth}, strings.Repeat("[", 100000), []int{400, 413}, ""},
		{"2000 [", "POST", "/api/v1/hostnames", []string{auth}, strings.Repeat("[", 2000), []int{400}, ""},
		{"2000 [ closed", "POST", "/api/v1/hostnames", []string{auth}, strings.Repeat("[", 2000) + strings.Repeat("]", 2000), []int{400}, ""},
		{"ip nested 500 deep", "POST", "/api/v1/hostnames", []string{auth}, `{"ip":` + strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat("}", 501), []int{400}, ""},
		{"admin 2000 [", "POST", "/api/admin/accounts", []string{admin}, strings.Repeat("[", 2000), []int{400}, ""},
		{"acme-dns 2000 [", "POST", "/api/acme/update", []string{"X-Api-User: u", "X-Api-Key: k"}, strings.Repeat("[", 2000), []int{400}, ""},

		// Invalid UTF-8 in strings and labels: JSON is UTF-8 (RFC 8259), and
		// a body that is not is refused, not stored with U+FFFD in place of
		// what was sent.
		{"ip not UTF-8", "POST", "/api/v1/hostnames", []string{auth}, "{\"ip\":\"198.41.0.4\xff\"}", []int{400}, "UTF-8"},
		{"label not UTF-8", "POST", "/api/v1/hostnames", []string{auth}, "{\"ip\":\"198.41.0.4\",\"label\":\"caf\xc3\"}", []int{400}, "UTF-8"},
		{"label overlong UTF-8", "POST", "/api/v1/hostnames", []string{auth}, "{\"ip\":\"198.41.0.4\",\"label\":\"a\xc0\xafb-c\"}", []int{400}, "UTF-8"},
		{"label UTF-16 surrogate", "POST", "/api/v1/hostnames", []string{auth}, "{\"ip\":\"198.41.0.4\",\"label\":\"ab\xed\xa0\x80c\"}", []int{400}, "UTF-8"},
		{"field name not UTF-8", "POST", "/api/v1/hostnames", []string{auth}, "{\"ip\xff\":\"198.41.0.4\"}", []int{400}, "UTF-8"},
		{"account name not UTF-8", "POST", "/api/admin/accounts", []string{admin}, "{\"name\":\"team \xff\xfe\",\"plan\":\"free\"}", []int{400}, "UTF-8"},
		{"acme-dns body not UTF-8", "POST", "/api/acme/update", []string{"X-Api-User: u", "X-Api-Key: k"}, "{\"subdomain\":\"\xff\",\"txt\":\"x\"}", []int{400}, "UTF-8"},
		// Escaped, a lone surrogate is valid JSON; the label rules refuse
		// what it decodes to, and a label's message names the character sent.
		{"label lone surrogate escaped", "POST", "/api/v1/hostnames", []string{auth}, `{"ip":"198.41.0.4","label":"ab\ud800c"}`, []int{400}, "label"},
		{"label in Unicode", "POST", "/api/v1/hostnames", []string{auth}, `{"ip":"198.41.0.4","label":"bücher"}`, []int{400}, "'ü'"},
		{"path not UTF-8", "GET", "/api/v1/hostnames/%ff%fe", []string{auth}, "", []int{404}, ""},
		{"raw path byte not UTF-8", "GET", "/api/v1/hostnames/\xff", []string{auth}, "", []int{400, 404}, ""},

		// Header lines: past the 16KB cap 431, however the bytes are spread.
		{"one header past the cap", "GET", "/api/v1/hostnames", []string{auth, "X-Pad: " + pad(hostileOverHeaders)}, "", []int{431}, ""},
		{"one header of 1MB", "GET", "/api/v1/hostnames", []string{auth, "X-Pad: " + pad(1<<20)}, "", []int{431}, ""},
		{"Authorization past the cap", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer " + pad(hostileOverHeaders)}, "", []int{431}, ""},
		{"3000 headers", "GET", "/api/v1/hostnames", append([]string{auth}, many(3000, "X-H%d: v")...), "", []int{431}, ""},
		// Under the cap they are ordinary requests.
		{"200 headers", "GET", "/api/v1/hostnames", append([]string{auth}, many(200, "X-H%d: v")...), "", []int{200}, ""},
		{"Authorization of 8KB", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer " + pad(8<<10)}, "", []int{401}, ""},

		// Authorization is a singleton field (RFC 9110 11.6.2): two are
		// ambiguous - a proxy may check one and the server use the other -
		// and refused whichever comes first.
		{"two Authorization, valid first", "GET", "/api/v1/hostnames", []string{auth, "Authorization: Bearer svc_x_y"}, "", []int{401}, ""},
		{"two Authorization, valid second", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer svc_x_y", auth}, "", []int{401}, ""},
		{"the same Authorization twice", "GET", "/api/v1/hostnames", []string{auth, auth}, "", []int{401}, ""},
		{"Authorization and authorization", "GET", "/api/v1/hostnames", []string{auth, "authorization: Bearer svc_x_y"}, "", []int{401}, ""},
		{"two admin Authorization", "POST", "/api/admin/accounts", []string{admin, "Authorization: Bearer nope"}, `{"name":"x","plan":"free"}`, []int{401}, ""},
		{"two admin Authorization, same", "POST", "/api/admin/accounts", []string{admin, admin}, `{"name":"x","plan":"free"}`, []int{401}, ""},

		// Control characters: net/http refuses the request before any
		// handler runs; the answer is still the JSON shape.
		{"Authorization with NUL", "GET", "/api/v1/hostnames", []string{auth + "\x00"}, "", []int{400, 401}, ""},
		{"Authorization with ^A", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer svc\x01_a_b"}, "", []int{400, 401}, ""},
		{"Authorization with ESC", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer \x1b[2J" + key}, "", []int{400, 401}, ""},
		{"Authorization with DEL", "GET", "/api/v1/hostnames", []string{auth + "\x7f"}, "", []int{400, 401}, ""},
		{"Authorization with a bare CR", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer\rX: y"}, "", []int{400, 401}, ""},
		{"Authorization with bytes over 0x7f", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer svc_\xff\xfe_x"}, "", []int{401}, ""},
		{"Authorization with a tab", "GET", "/api/v1/hostnames", []string{"Authorization: Bearer\t" + key}, "", []int{200, 401}, ""},
		{"admin token with ^A", "POST", "/api/admin/accounts", []string{admin + "\x01"}, `{"name":"x","plan":"free"}`, []int{400, 401}, ""},

		// Malformed framing.
		{"header name with a space", "GET", "/api/v1/hostnames", []string{auth, "Bad Name: x"}, "", []int{400}, ""},
		{"header line without a colon", "GET", "/api/v1/hostnames", []string{auth, "no colon here"}, "", []int{400}, ""},
		{"folded header line", "GET", "/api/v1/hostnames", []string{auth, "X-A: a", " folded"}, "", []int{200, 400}, ""},
		{"two Content-Lengths", "POST", "/api/v1/hostnames", []string{auth, "Content-Length: 2", "Content-Length: 3"}, "{}", []int{400}, ""},
		{"negative Content-Length", "POST", "/api/v1/hostnames", []string{auth, "Content-Length: -1"}, "{}", []int{400}, ""},
		{"Content-Length and chunked", "POST", "/api/v1/hostnames", []string{auth, "Content-Length: 3", "Transfer-Encoding: chunked"},
			chunked(`{}`, 1), []int{400}, ""},
		{"Expect other than 100-continue", "POST", "/api/v1/hostnames", []string{auth, "Expect: the-unexpected"}, "{}", []int{417}, ""},
		// The two 5xx HTTP itself asks for (RFC 9112 6.1, RFC 9110 15.6.6):
		// they say "not this protocol", not "server fault".
		{"Transfer-Encoding gzip", "POST", "/api/v1/hostnames", []string{auth, "Transfer-Encoding: gzip"}, "{}", []int{501}, ""},
		{"HTTP/2.0 in the request line", "GET", "/api/v1/hostnames HTTP/2.0\r\nX-Ignore:", []string{auth}, "", []int{505}, ""},
		{"not HTTP at all", "\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03", "/", nil, "", []int{400}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := hostileRequest(tc.method, tc.path, tc.lines, tc.body)
			status, h, body, err := hostileExchange(addr, raw)
			if err != nil {
				t.Fatalf("%v (answer so far: %d %q)", err, status, body)
			}
			t.Logf("%d %.200s", status, body)
			if !slices.Contains(tc.status, status) {
				t.Errorf("status %d, want one of %v: %s", status, tc.status, body)
			}
			if !strings.Contains(string(body), tc.msg) {
				t.Errorf("answer does not say %q: %s", tc.msg, body)
			}
			if status >= 500 && !slices.Contains(tc.status, status) {
				t.Errorf("a 5xx for a client's mistake: %d %s", status, body)
			}
			if status >= 300 {
				hostileErrorShape(t, tc.name, status, h, body)
			} else if !utf8.Valid(body) || !json.Valid(body) {
				t.Errorf("%d answer is not valid UTF-8 JSON: %q", status, body)
			}
		})
	}

	// Nothing refused was written, and the server still answers.
	if n := len(s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any)); n != 0 {
		t.Errorf("refused requests created %d hostnames", n)
	}
	s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "after-the-storm"})
}

// hostileDrip writes data one byte every interval until the server closes
// the connection, and says how long after dialling that was and what (if
// anything) the server answered. It runs beside others in goroutines, so it
// reports trouble with t.Error, never t.Fatal.
func hostileDrip(t *testing.T, addr string, prefix, data string, interval time.Duration) (closed time.Duration, answer []byte) {
	t.Helper()
	t0 := time.Now()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer conn.Close()
	conn.Write([]byte(prefix))
	done := make(chan struct{})
	var got bytes.Buffer
	go func() {
		defer close(done)
		conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // the test's own backstop
		io.Copy(&got, conn)
		closed = time.Since(t0)
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < len(data); i++ {
		select {
		case <-done:
			return closed, got.Bytes()
		case <-tick.C:
			conn.Write([]byte{data[i]})
		}
	}
	<-done
	return closed, got.Bytes()
}

// Slow clients are cut off within the http.Server's timeouts, and while
// hundreds of them hold connections open the API answers everyone else at
// once. (Slowloris: a server without ReadHeaderTimeout keeps a goroutine and
// a socket per trickling client for as long as the client likes.) The cases
// run side by side in goroutines: the test takes one parallel slot for the
// longest timeout, not one per case.
func TestHostileSlowClients(t *testing.T) {
	t.Parallel()
	s := start(t, options{})
	_, key := s.account("pro")
	addr := s.hostileHostPort()
	const margin = 2 * time.Second // scheduling on a loaded 2-core machine
	headers := "GET /api/v1/hostnames HTTP/1.1\r\nHost: hostmint.test\r\nAuthorization: Bearer " + key + "\r\n\r\n"
	body := `{"ip":"198.41.0.4","label":"` + strings.Repeat("a", 40) + `"}`

	tests := []struct {
		name   string
		prefix string // sent at once
		drip   string // then one byte a second
		within time.Duration
		status []int // what the server may answer before it closes; 0: nothing
	}{
		// Cut off mid-header, net/http either hangs up or answers 400.
		{"headers one byte a second", "", headers, hostileReadHeaderTimeout, []int{0, 400}},
		{"request line, then nothing", "GET /api/health HTTP/1.1\r\n", "", hostileReadHeaderTimeout, []int{0, 400}},
		{"connected, nothing sent", "", "", hostileReadHeaderTimeout, []int{0}},
		// ReadTimeout covers the body: the handler's read fails, and it
		// says so.
		{"body one byte a second", fmt.Sprintf("POST /api/v1/hostnames HTTP/1.1\r\nHost: hostmint.test\r\n"+
			"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", key, len(body)), body, hostileReadTimeout, []int{400}},
	}
	var wg sync.WaitGroup
	for _, tc := range tests {
		wg.Go(func() {
			closed, answer := hostileDrip(t, addr, tc.prefix, tc.drip, time.Second)
			t.Logf("%s: closed after %v; answer %q", tc.name, closed.Round(time.Millisecond), answer)
			if closed > tc.within+margin {
				t.Errorf("%s: the connection stayed open %v; the server's timeout is %v", tc.name, closed, tc.within)
			}
			if len(answer) == 0 {
				if !slices.Contains(tc.status, 0) {
					t.Errorf("%s: closed without an answer; want one of %v", tc.name, tc.status)
				}
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), nil)
			if err != nil {
				t.Errorf("%s: answer %q: %v", tc.name, answer, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			if !slices.Contains(tc.status, resp.StatusCode) {
				t.Errorf("%s: status %d, want one of %v: %s", tc.name, resp.StatusCode, tc.status, b)
			}
			hostileErrorShape(t, tc.name, resp.StatusCode, resp.Header, b)
			if strings.Contains(string(b), "127.0.0.1") {
				t.Errorf("%s: the message names sockets: %s", tc.name, b)
			}
		})
	}

	// Two hundred trickling clients do not keep anyone else waiting.
	for range 200 {
		wg.Go(func() { hostileDrip(t, addr, "", headers, time.Second) })
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 10; i++ {
		t0 := time.Now()
		req, _ := http.NewRequest("GET", s.api+"/api/v1/hostnames", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("beside 200 slow clients: %v", err)
			continue
		}
		resp.Body.Close()
		if d := time.Since(t0); resp.StatusCode != 200 || d > time.Second {
			t.Errorf("beside 200 slow clients: %d after %v", resp.StatusCode, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
}

// hostileDNS sends wire to the DNS server over proto and returns the raw
// answer; nil if none came within a second (the server drops what it cannot
// parse).
func hostileDNS(t testing.TB, addr, proto string, wire []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout(proto, addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if proto == "udp" {
		if _, err := conn.Write(wire); err != nil {
			t.Fatalf("sending %d bytes over UDP: %v", len(wire), err)
		}
		buf := make([]byte, 65535)
		n, err := conn.Read(buf)
		if err != nil {
			return nil
		}
		return buf[:n]
	}
	if _, err := conn.Write(append([]byte{byte(len(wire) >> 8), byte(len(wire))}, wire...)); err != nil {
		t.Fatalf("sending %d bytes over TCP: %v", len(wire), err)
	}
	var n [2]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return nil
	}
	buf := make([]byte, int(n[0])<<8|int(n[1]))
	if _, err := io.ReadFull(conn, buf); err != nil {
		t.Fatalf("reading a %d-byte answer over TCP: %v", len(buf), err)
	}
	return buf
}

// hostileQuery is a query for name and qtype, RD clear, changed by opts.
func hostileQuery(name string, qtype uint16, opts ...func(*dns.Msg)) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	for _, o := range opts {
		o(m)
	}
	return m
}

func hostileEDNS(size uint16, do bool) func(*dns.Msg) {
	return func(m *dns.Msg) { m.SetEdns0(size, do) }
}

func hostileRD(m *dns.Msg) { m.RecursionDesired = true }

// hostileTXT is the text of the i-th of the big hostname's TXT records:
// 2000 bytes, so ten of them make a 20KB RRset.
func hostileTXT(i int) string { return strings.Repeat(string(rune('a'+i)), 2000) }

// The DNS server against queries built to abuse it: an RRset too big for
// UDP is truncated (TC) and whole over TCP; a client's huge EDNS buffer does
// not buy a huge datagram; ANY gets one small synthesised HINFO (RFC 8482)
// whatever the name holds; names outside the zones are REFUSED whether or
// not recursion is asked for; and malformed, oversized or many-question
// messages get FORMERR or nothing, the server answering normally after.
func TestHostileDNS(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2, extra: []string{certKeyFile(t)}})
	const zone = "hostile.example.net"
	_, key := s.team(t, zone)
	id, big := s.recHost(t, key, "big", "198.41.0.4")
	for i := range 10 {
		s.must(201, "POST", recPath(id), key, recObj{"type": "TXT", "text": hostileTXT(i)})
	}
	// _tcp.srv is an empty non-terminal: it exists, holding nothing.
	srvID, srv := s.recHost(t, key, "srv", "198.41.0.5")
	s.must(201, "POST", recPath(srvID), key, recObj{"type": "SRV", "name": "_sip._tcp", "priority": 1, "weight": 1, "port": 5060, "target": srv})
	// Signed, so that ANY with DO is measured with its RRSIG too.
	s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, zone), s.admin, map[string]any{"dnssec": true})
	eventually(t, 5*time.Second, func() bool {
		m := s.query(big, dns.TypeTXT, "tcp")
		return len(m.Answer) == 10 && hasType(s.queryDO(big, dns.TypeA), dns.TypeRRSIG) &&
			len(s.query("_sip._tcp."+srv, dns.TypeSRV, "udp").Answer) == 1
	}, "the ten TXT records and the signature never showed")

	type check func(t *testing.T, q []byte, r *dns.Msg, raw []byte)
	rcode := func(want int) check {
		return func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
			if r.Rcode != want {
				t.Errorf("rcode %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[want])
			}
		}
	}
	// at most: the answer is no bigger than n bytes, and no more than
	// factor times the query (0: no factor).
	atMost := func(n int, factor float64) check {
		return func(t *testing.T, q []byte, _ *dns.Msg, raw []byte) {
			if len(raw) > n {
				t.Errorf("answer of %d bytes, more than %d", len(raw), n)
			}
			if f := float64(len(raw)) / float64(len(q)); factor > 0 && f > factor {
				t.Errorf("answer of %d bytes to a query of %d: amplified %.1f times, more than %.1f", len(raw), len(q), f, factor)
			}
		}
	}
	truncated := func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
		if !r.Truncated || r.Rcode != dns.RcodeSuccess {
			t.Errorf("TC %t, rcode %s; want TC and NOERROR", r.Truncated, dns.RcodeToString[r.Rcode])
		}
	}
	allTXT := func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
		if r.Truncated || len(r.Answer) != 10 {
			t.Fatalf("TC %t, %d answers; want the whole RRset of 10", r.Truncated, len(r.Answer))
		}
		var got []string
		for _, rr := range r.Answer {
			got = append(got, strings.Join(rr.(*dns.TXT).Txt, ""))
		}
		slices.Sort(got)
		for i := range 10 {
			if got[i] != hostileTXT(i) {
				t.Errorf("TXT %d: %.20q..., want %.20q...", i, got[i], hostileTXT(i))
			}
		}
	}
	hinfo := func(signed bool) check {
		return func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
			var h *dns.HINFO
			sigs := 0
			for _, rr := range r.Answer {
				switch v := rr.(type) {
				case *dns.HINFO:
					h = v
				case *dns.RRSIG:
					sigs++
				default:
					t.Errorf("ANY answered with %.100s", rr)
				}
			}
			if r.Rcode != dns.RcodeSuccess || h == nil || h.Cpu != "RFC8482" || h.Os != "" {
				t.Errorf("rcode %s, answer %v; want one HINFO \"RFC8482\" \"\"", dns.RcodeToString[r.Rcode], r.Answer)
			}
			if want := map[bool]int{false: 0, true: 1}[signed]; sigs != want {
				t.Errorf("%d RRSIGs beside the HINFO, want %d", sigs, want)
			}
		}
	}
	nodata := func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
			t.Errorf("rcode %s, %d answers, %d authority; want NODATA with the SOA", dns.RcodeToString[r.Rcode], len(r.Answer), len(r.Ns))
		}
	}
	refused := func(t *testing.T, _ []byte, r *dns.Msg, _ []byte) {
		if r.Rcode != dns.RcodeRefused || r.RecursionAvailable || len(r.Answer)+len(r.Ns) != 0 {
			t.Errorf("rcode %s, RA %t, %d answers, %d authority; want REFUSED, no RA, nothing else",
				dns.RcodeToString[r.Rcode], r.RecursionAvailable, len(r.Answer), len(r.Ns))
		}
	}

	// huge is a query padded (EDNS0 padding, RFC 7830) to size bytes.
	huge := func(size int) func(*dns.Msg) {
		return func(m *dns.Msg) {
			m.SetEdns0(1232, false)
			opt := m.IsEdns0()
			pad := &dns.EDNS0_PADDING{}
			opt.Option = append(opt.Option, pad)
			pad.Padding = make([]byte, size-m.Len())
		}
	}
	questions := func(n int) func(*dns.Msg) {
		return func(m *dns.Msg) {
			for i := 1; i < n; i++ {
				m.Question = append(m.Question, dns.Question{Name: fmt.Sprintf("q%d.%s.", i, zone), Qtype: dns.TypeTXT, Qclass: dns.ClassINET})
			}
		}
	}

	tests := []struct {
		name   string
		proto  string
		q      *dns.Msg
		checks []check // none: no answer is fine too
	}{
		// An RRset bigger than the client takes over UDP: TC, and whole over TCP.
		{"TXT over UDP", "udp", hostileQuery(big, dns.TypeTXT), []check{truncated, atMost(512, 0)}},
		{"TXT over UDP, EDNS 1232", "udp", hostileQuery(big, dns.TypeTXT, hostileEDNS(1232, false)), []check{truncated, atMost(1232, 0)}},
		{"TXT over UDP, EDNS 4096", "udp", hostileQuery(big, dns.TypeTXT, hostileEDNS(4096, false)), []check{truncated, atMost(1232, 0)}},
		// A client's 64KB buffer does not buy a 20KB datagram: past 1232
		// bytes (DNS Flag Day 2020) UDP answers fragment, and amplify.
		{"TXT over UDP, EDNS 65535", "udp", hostileQuery(big, dns.TypeTXT, hostileEDNS(65535, false)), []check{truncated, atMost(1232, 0)}},
		{"TXT over UDP, EDNS 65535, DO", "udp", hostileQuery(big, dns.TypeTXT, hostileEDNS(65535, true)), []check{truncated, atMost(1232, 0)}},
		{"TXT over TCP", "tcp", hostileQuery(big, dns.TypeTXT), []check{allTXT}},
		{"TXT over TCP, EDNS 512", "tcp", hostileQuery(big, dns.TypeTXT, hostileEDNS(512, false)), []check{allTXT}},
		{"A over UDP, EDNS 65535", "udp", hostileQuery(big, dns.TypeA, hostileEDNS(65535, false)), []check{rcode(dns.RcodeSuccess), atMost(200, 0)}},

		// ANY: one small HINFO, not the 20KB the name holds. The factors:
		// the answer repeats the question, then one RR (its owner written
		// out, as answers are not compressed unless they must be); with DO
		// an ECDSA RRSIG; a denial carries the SOA, as for any type.
		{"ANY at the hostname over UDP", "udp", hostileQuery(big, dns.TypeANY), []check{hinfo(false), atMost(512, 2.5)}},
		{"ANY at the hostname, EDNS 65535", "udp", hostileQuery(big, dns.TypeANY, hostileEDNS(65535, false)), []check{hinfo(false), atMost(512, 2.5)}},
		{"ANY at the hostname over TCP", "tcp", hostileQuery(big, dns.TypeANY), []check{hinfo(false), atMost(512, 2.5)}},
		{"ANY at the hostname, DO", "udp", hostileQuery(big, dns.TypeANY, hostileEDNS(4096, true)), []check{hinfo(true), atMost(512, 5)}},
		{"ANY at the apex", "udp", hostileQuery(zone, dns.TypeANY, hostileEDNS(4096, false)), []check{hinfo(false), atMost(512, 2.5)}},
		{"ANY at the apex, DO", "udp", hostileQuery(zone, dns.TypeANY, hostileEDNS(4096, true)), []check{hinfo(true), atMost(512, 5)}},
		{"ANY at a nameserver name", "udp", hostileQuery("ns1.example.org", dns.TypeANY), []check{hinfo(false), atMost(512, 2.5)}},
		{"ANY at a missing name", "udp", hostileQuery("nothing."+zone, dns.TypeANY), []check{rcode(dns.RcodeNameError), atMost(512, 3.5)}},
		{"ANY at an empty non-terminal", "udp", hostileQuery("_tcp."+"srv."+zone, dns.TypeANY), []check{nodata, atMost(512, 3.5)}},

		// Not an open resolver: outside the zones, REFUSED, asked to
		// recurse or not, and no bigger than the question.
		{"outside, RD", "udp", hostileQuery("www.example.com", dns.TypeA, hostileRD), []check{refused, atMost(512, 1)}},
		{"outside, no RD", "udp", hostileQuery("www.example.com", dns.TypeA), []check{refused, atMost(512, 1)}},
		{"outside over TCP, RD", "tcp", hostileQuery("www.example.com", dns.TypeA, hostileRD), []check{refused, atMost(512, 1)}},
		{"root NS, RD", "udp", hostileQuery(".", dns.TypeNS, hostileRD), []check{refused, atMost(512, 1)}},
		{"root ANY, RD, EDNS 4096", "udp", hostileQuery(".", dns.TypeANY, hostileRD, hostileEDNS(4096, true)), []check{refused, atMost(512, 1)}},
		{"the zone's parent, RD", "udp", hostileQuery("example.net", dns.TypeSOA, hostileRD), []check{refused, atMost(512, 1)}},
		{"a TLD, RD", "udp", hostileQuery("org", dns.TypeNS, hostileRD), []check{refused, atMost(512, 1)}},
		{"a zone name inside another", "udp", hostileQuery(zone+".example.com", dns.TypeA, hostileRD), []check{refused, atMost(512, 1)}},
		{"a look-alike of the zone", "udp", hostileQuery("x"+zone, dns.TypeA, hostileRD), []check{refused, atMost(512, 1)}},
		{"outside, ANY, RD", "tcp", hostileQuery("example.com", dns.TypeANY, hostileRD), []check{refused, atMost(512, 1)}},

		// Huge and malformed queries.
		{"65535-byte query over TCP", "tcp", hostileQuery(big, dns.TypeA, huge(65535)), nil},
		{"65507-byte query over UDP", "udp", hostileQuery(big, dns.TypeA, huge(65507)), nil},
		{"2 questions", "udp", hostileQuery(big, dns.TypeTXT, questions(2)), []check{rcode(dns.RcodeFormatError), atMost(512, 1)}},
		{"500 questions over TCP", "tcp", hostileQuery(big, dns.TypeTXT, questions(500)), []check{rcode(dns.RcodeFormatError), atMost(512, 1)}},
		{"no question", "udp", hostileQuery(big, dns.TypeA, func(m *dns.Msg) { m.Question = nil }), []check{rcode(dns.RcodeFormatError), atMost(512, 0)}},
		{"EDNS version 1", "udp", hostileQuery(big, dns.TypeTXT, hostileEDNS(4096, false), func(m *dns.Msg) { m.IsEdns0().SetVersion(1) }),
			[]check{rcode(dns.RcodeBadVers), atMost(512, 2)}},
		{"50 additional records", "tcp", hostileQuery(big, dns.TypeTXT, func(m *dns.Msg) {
			for i := range 50 {
				rr, _ := dns.NewRR(fmt.Sprintf("x%d.%s. 60 IN TXT %q", i, zone, strings.Repeat("z", 200)))
				m.Extra = append(m.Extra, rr)
			}
		}), []check{rcode(dns.RcodeFormatError), atMost(512, 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tc.q.Pack()
			if err != nil {
				t.Fatal(err)
			}
			raw := hostileDNS(t, s.dnsAddr, tc.proto, q)
			if raw == nil {
				if len(tc.checks) > 0 {
					t.Fatalf("no answer to a %d-byte query over %s", len(q), tc.proto)
				}
			} else {
				r := new(dns.Msg)
				if err := r.Unpack(raw); err != nil {
					t.Fatalf("the %d-byte answer does not unpack: %v", len(raw), err)
				}
				t.Logf("%d-byte query over %s: %d-byte answer, %s, TC %t, %d answers", len(q), tc.proto, len(raw),
					dns.RcodeToString[r.Rcode], r.Truncated, len(r.Answer))
				if r.Id != tc.q.Id || !r.Response {
					t.Errorf("answer ID %d, QR %t; query ID %d", r.Id, r.Response, tc.q.Id)
				}
				for _, c := range tc.checks {
					c(t, q, r, raw)
				}
			}
			// Whatever came before, the server still answers.
			if got := addrs(s.withT(t).query(big, dns.TypeA, tc.proto)); !slices.Equal(got, []string{"198.41.0.4"}) {
				t.Errorf("after it, %s A over %s: %v", big, tc.proto, got)
			}
		})
	}
}

// hostileDBProxy forwards TCP to PostgreSQL and counts the bytes the
// service sends it: every query, whatever the driver, is bytes on this
// wire, with no lag (pg_stat_database is flushed by each backend at most
// once a second, and only when idle after ten). cut makes the database
// unreachable: connections reset, new ones refused.
type hostileDBProxy struct {
	target string
	sent   atomic.Int64
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func hostileNewDBProxy(t *testing.T, target string) *hostileDBProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hostileDBProxy{target: target, ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(hostileCounter{up, &p.sent}, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

type hostileCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (c hostileCounter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	return c.w.Write(b)
}

func (p *hostileDBProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// hostileMisses asks n random names under zone over UDP from workers
// goroutines and fails unless each is NXDOMAIN within a second. It returns
// how long it took.
func hostileMisses(t *testing.T, addr, zone string, n, workers int) time.Duration {
	t.Helper()
	types := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeMX, dns.TypeANY}
	var bad atomic.Int32
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			c := &dns.Client{Net: "udp", Timeout: time.Second}
			conn, err := c.Dial(addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			for i := w; i < n; i += workers {
				label := fmt.Sprintf("%x", rand.Uint64())
				if i%3 == 0 {
					label += ".deeper." + fmt.Sprintf("%x", rand.Uint32())
				}
				m := hostileQuery(label+"."+zone, types[i%len(types)])
				r, _, err := c.ExchangeWithConn(m, conn)
				if err != nil || r.Rcode != dns.RcodeNameError || len(r.Ns) != 1 {
					if bad.Add(1) <= 3 {
						t.Errorf("%s: %v %v", m.Question[0].Name, err, r)
					}
				}
			}
		})
	}
	wg.Wait()
	if b := bad.Load(); b > 0 {
		t.Errorf("%d of %d random names were not NXDOMAIN", b, n)
	}
	return time.Since(t0)
}

// A flood of queries for names that do not exist (the random-subdomain
// attack) does no database work: answers come from the in-memory index, and
// a miss is a map lookup. Measured on the wire to PostgreSQL: the service
// sends it no more during 10000 misses than it does idle (the change feed's
// poll); then, with the database cut off, misses are still answered, at once.
func TestHostileDNSFloodNoDatabase(t *testing.T) {
	t.Parallel()
	dsn := storagetest.DSN(t, storage.Postgres)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := hostileNewDBProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	s := start(t, options{dialect: storage.Postgres, dsn: u.String()})
	_, key := s.account("pro")
	s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "present"})
	s.resolves("present.example.org", dns.TypeA, "198.41.0.4")

	// What the service sends PostgreSQL when nobody asks it anything: the
	// change feed's poll (feed_poll 200ms in these tests).
	const idleFor = 2 * time.Second
	before := p.sent.Load()
	time.Sleep(idleFor)
	idle := float64(p.sent.Load()-before) / idleFor.Seconds()

	const n = 10000
	before = p.sent.Load()
	took := hostileMisses(t, s.dnsAddr, "example.org", n, 8)
	sent := p.sent.Load() - before
	allowed := int64(idle*took.Seconds()*2) + 4096
	t.Logf("idle: %.0f bytes/s to PostgreSQL; %d misses in %v (%.0f/s): %d bytes to PostgreSQL, allowed %d",
		idle, n, took.Round(time.Millisecond), n/took.Seconds(), sent, allowed)
	if sent > allowed {
		t.Errorf("%d misses sent PostgreSQL %d bytes (%.1f a miss); idle, the service sends %.0f a second",
			n, sent, float64(sent)/n, idle)
	}

	// The database gone, misses and hits are still answered from memory.
	p.cut()
	took = hostileMisses(t, s.dnsAddr, "example.org", 1000, 4)
	t.Logf("database cut off: 1000 misses in %v", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("1000 misses took %v with the database cut off", took)
	}
	s.resolves("present.example.org", dns.TypeA, "198.41.0.4")
}
