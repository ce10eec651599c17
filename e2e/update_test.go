package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// DNS UPDATE (RFC 2136) signed with TSIG, as the DNS automation people
// already run sends it: nsupdate and knsupdate against the built binary.

// tsigKey is a key as its create answer gives it.
type tsigKey struct{ id, name, secret string }

// updateOptions are a server's options with dynamic_update and a
// certificate encryption key (which seals the TSIG secrets).
func updateOptions(t testing.TB, d storage.Dialect, profile int) options {
	dir := t.TempDir()
	key := make([]byte, 32)
	rand.Read(key)
	path := filepath.Join(dir, "cert.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return options{dialect: d, profile: profile, dir: dir,
		extra: []string{"cert_encryption_key_file " + path, "dynamic_update"}}
}

// tsig makes a TSIG key through path (an admin or a bearer endpoint).
func (s *server) tsig(path, token string, body map[string]any) tsigKey {
	s.t.Helper()
	r := s.must(201, "POST", path, token, body)
	return tsigKey{id: r.str("id"), name: r.str("key_name"), secret: r.str("secret")}
}

// nsupdate runs BIND's nsupdate with k on script (its commands without
// server, key and send) over TCP; it returns the output and whether the
// update succeeded.
func (s *server) nsupdate(k tsigKey, script string) (string, bool) {
	s.t.Helper()
	host, port, _ := strings.Cut(s.dnsAddr, ":")
	in := fmt.Sprintf("server %s %s\n%s\nsend\n", host, port, strings.TrimSpace(script))
	args := []string{"-v", "-t", "5"}
	if k.name != "" {
		args = append(args, "-y", "hmac-sha256:"+k.name+":"+k.secret)
	}
	return run(s.t, "nsupdate", in, args...)
}

// knsupdate runs Knot's knsupdate likewise (over UDP, its default).
func (s *server) knsupdate(k tsigKey, script string) (string, bool) {
	s.t.Helper()
	host, port, _ := strings.Cut(s.dnsAddr, ":")
	in := fmt.Sprintf("server %s %s\nkey hmac-sha256:%s %s\n%s\nsend\nanswer\n", host, port, k.name, k.secret, strings.TrimSpace(script))
	return run(s.t, "knsupdate", in)
}

func run(t testing.TB, name, stdin string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed: run ./scripts/test-deps.sh", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// mustUpdate fails the test unless script is applied.
func (s *server) mustUpdate(k tsigKey, script string) {
	s.t.Helper()
	if out, ok := s.nsupdate(k, script); !ok {
		s.t.Fatalf("nsupdate %q failed:\n%s", script, out)
	}
}

// refusedUpdate fails the test unless script fails with want in the output.
func (s *server) refusedUpdate(k tsigKey, script, want string) {
	s.t.Helper()
	out, ok := s.nsupdate(k, script)
	if ok || !strings.Contains(out, want) {
		s.t.Fatalf("nsupdate %q: ok=%v, want a failure with %q:\n%s", script, ok, want, out)
	}
}

// signedSOA asks for example.org's SOA over TCP, signed with k: the
// answer's rcode and TSIG error.
func (s *server) signedSOA(k tsigKey) (rcode int, tsigErr uint16) {
	s.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeSOA)
	m.SetTsig(k.name+".", dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", TsigSecret: map[string]string{k.name + ".": k.secret}}
	r, _, err := c.Exchange(m, s.dnsAddr) // an unsigned refusal fails the client's check: read it anyway
	if r == nil {
		s.t.Fatalf("a signed SOA query: %v", err)
	}
	if t := r.IsTsig(); t != nil {
		tsigErr = t.Error
	}
	return r.Rcode, tsigErr
}

// lookup asks for name over UDP: its addresses, or the rcode.
func (s *server) lookup(name string, qtype uint16) string {
	s.t.Helper()
	return strings.Join(addrs(s.query(name, qtype, "udp")), ",")
}

func TestUpdateNsupdate(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, p := spawn(t, updateOptions(t, d, 1))
			acct, _ := s.account("pro")
			k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, map[string]any{"name": "laptop"})
			if !strings.HasSuffix(k.name, ".tsig") || len(k.secret) != 44 {
				t.Fatalf("key %+v", k)
			}

			// Mint: an address at a new label is a hostname with that label.
			s.mustUpdate(k, "update add laptop.example.org 60 A 93.184.215.14")
			s.resolves("laptop.example.org", dns.TypeA, "93.184.215.14")

			// Repoint to IPv6 with a prerequisite that holds; the TTL sent is ignored.
			s.mustUpdate(k, `prereq yxdomain laptop.example.org
update delete laptop.example.org A
update add laptop.example.org 3600 AAAA 2606:2800:21f:cb07:6820:80da:af6b:8b2c`)
			s.resolves("laptop.example.org", dns.TypeAAAA, "2606:2800:21f:cb07:6820:80da:af6b:8b2c")
			if got := s.query("laptop.example.org", dns.TypeAAAA, "udp"); got.Answer[0].Header().Ttl != 60 {
				t.Errorf("TTL %d, want the service's 60", got.Answer[0].Header().Ttl)
			}

			// Prerequisites that fail answer their rcode, and nothing of the message is applied.
			s.refusedUpdate(k, "prereq nxdomain laptop.example.org\nupdate add other.example.org 60 A 93.184.215.14", "YXDOMAIN")
			s.refusedUpdate(k, "prereq yxrrset laptop.example.org A\nupdate add other.example.org 60 A 93.184.215.14", "NXRRSET")
			s.refusedUpdate(k, "prereq yxdomain nothing.example.org\nupdate add other.example.org 60 A 93.184.215.14", "NXDOMAIN")
			s.refusedUpdate(k, "prereq nxrrset laptop.example.org AAAA\nupdate add other.example.org 60 A 93.184.215.14", "YXRRSET")
			s.mustUpdate(k, "prereq yxrrset laptop.example.org AAAA 2606:2800:21f:cb07:6820:80da:af6b:8b2c")
			s.refusedUpdate(k, "prereq yxrrset laptop.example.org AAAA 2001:db8::1", "NXRRSET")
			if got := s.lookup("other.example.org", dns.TypeA); got != "NXDOMAIN" {
				t.Errorf("other.example.org after refused messages: %s", got)
			}

			// All or nothing: a rule refuses the second name (a private
			// address needs the Business plan), so the first is not minted.
			s.refusedUpdate(k, "update add first.example.org 60 A 93.184.215.14\nupdate add second.example.org 60 A 10.0.0.1", "REFUSED")
			if got := s.lookup("first.example.org", dns.TypeA); got != "NXDOMAIN" {
				t.Errorf("first.example.org after a refused message: %s", got)
			}
			// A second address for one hostname is refused: it holds one.
			s.refusedUpdate(k, "update add laptop.example.org 60 AAAA 2001:4860:4860::8888", "REFUSED")

			// Idempotence: adding what is there and deleting what is not change nothing.
			s.mustUpdate(k, "update add laptop.example.org 60 AAAA 2606:2800:21f:cb07:6820:80da:af6b:8b2c")
			s.mustUpdate(k, "update delete laptop.example.org AAAA 2001:db8::99\nupdate delete gone.example.org A")

			// DNS-01 values at _acme-challenge: two kept, one withdrawn.
			v1, v2 := strings.Repeat("a", 43), strings.Repeat("b", 43)
			s.mustUpdate(k, "update add _acme-challenge.laptop.example.org 60 TXT "+v1+"\nupdate add _acme-challenge.laptop.example.org 60 TXT "+v2)
			if got := txts(s, "_acme-challenge.laptop.example.org"); got != v1+","+v2 && got != v2+","+v1 {
				t.Errorf("challenge values %q", got)
			}
			s.mustUpdate(k, "update delete _acme-challenge.laptop.example.org TXT "+v1)
			if got := txts(s, "_acme-challenge.laptop.example.org"); got != v2 {
				t.Errorf("challenge values after a delete %q", got)
			}
			s.refusedUpdate(k, "update add _acme-challenge.laptop.example.org 60 TXT short", "REFUSED")

			// What UPDATE does not write is refused, outside the zone is NOTZONE,
			// a zone not served NOTAUTH, and a malformed zone section FORMERR.
			s.refusedUpdate(k, "update add example.org 60 A 93.184.215.14", "REFUSED")
			s.refusedUpdate(k, "update add laptop.example.org 60 MX 10 mail.example.org.", "REFUSED")
			s.refusedUpdate(k, "zone example.org\nupdate add laptop.example.net 60 A 93.184.215.14", "NOTZONE")
			s.refusedUpdate(k, "zone example.net\nupdate add laptop.example.net 60 A 93.184.215.14", "NOTAUTH")

			// Unsigned, a wrong secret, an unknown key.
			s.refusedUpdate(tsigKey{}, "update add unsigned.example.org 60 A 93.184.215.14", "REFUSED")
			bad := k
			bad.secret = base64.StdEncoding.EncodeToString(make([]byte, 32))
			s.refusedUpdate(bad, "update add badsig.example.org 60 A 93.184.215.14", "NOTAUTH")

			// Release: deleting every address of a hostname.
			s.mustUpdate(k, "update delete laptop.example.org AAAA")
			s.resolves("laptop.example.org", dns.TypeAAAA, "NXDOMAIN")
			// The audit log has each message, every refusal under its code
			// with the words its EDE carried; the door's own too (an MX is no
			// record UPDATE writes: FORBIDDEN; a zone not served: NOT_FOUND).
			h := s.must(200, "GET", "/api/admin/audit?actor=tsig:"+k.id, s.admin, nil)
			if raw := string(h.raw); !strings.Contains(raw, "DNS UPDATE example.org") || !strings.Contains(raw, `"result":"ok"`) ||
				!strings.Contains(raw, `"result":"FORBIDDEN"`) || !strings.Contains(raw, `"result":"BAD_REQUEST"`) ||
				!strings.Contains(raw, "by UPDATE, not MX") || !strings.Contains(raw, `"result":"NOT_FOUND","status":0,"address":`) ||
				!strings.Contains(raw, "zone example.net is not served here") || strings.Contains(raw, `"result":"REFUSED"`) {
				t.Errorf("the audit log of key %s: %s", k.id, h.raw)
			}
			for _, e := range h.body["entries"].([]any) {
				e := e.(map[string]any)
				if (e["result"] == "ok") != (e["detail"] == "") {
					t.Errorf("audit entry %v: a refusal says why, an ok nothing", e)
				}
			}

			// Revoked: refused at once, UPDATE and signed query alike, with no
			// reload of the DNS servers (a reload closes TCP connections they
			// accepted and have not read yet: nsupdate saw a reset).
			if rcode, tsigErr := s.signedSOA(k); rcode != dns.RcodeSuccess || tsigErr != dns.RcodeSuccess {
				t.Errorf("a signed SOA query before revocation: %s, TSIG error %s", dns.RcodeToString[rcode], dns.RcodeToString[int(tsigErr)])
			}
			reloads := strings.Count(p.output(), "TSIG keys changed")
			s.must(200, "DELETE", "/api/admin/tsig-keys/"+k.id, s.admin, nil)
			s.refusedUpdate(k, "update add late.example.org 60 A 93.184.215.14", "NOTAUTH")
			if rcode, tsigErr := s.signedSOA(k); rcode != dns.RcodeNotAuth || tsigErr != dns.RcodeBadKey {
				t.Errorf("a signed SOA query after revocation: %s, TSIG error %s; want NOTAUTH, BADKEY", dns.RcodeToString[rcode], dns.RcodeToString[int(tsigErr)])
			}
			time.Sleep(1100 * time.Millisecond) // past the reloads' spacing (1 s)
			if n := strings.Count(p.output(), "TSIG keys changed"); n != reloads {
				t.Errorf("revoking a key reloaded the DNS servers (%d reloads, %d before):\n%s", n, reloads, p.output())
			}
		})
	}
}

func TestUpdateKnsupdate(t *testing.T) {
	t.Parallel()
	s, _ := spawn(t, updateOptions(t, storage.SQLite, 1))
	acct, _ := s.account("pro")
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	for _, step := range []struct {
		script, fails string
		name          string
		qtype         uint16
		want          string
	}{
		{script: "zone example.org.\nupdate add knot.example.org. 60 A 93.184.215.14", name: "knot.example.org", qtype: dns.TypeA, want: "93.184.215.14"},
		{script: "zone example.org.\nprereq yxdomain knot.example.org.\nupdate del knot.example.org. A\nupdate add knot.example.org. 60 A 198.41.0.4",
			name: "knot.example.org", qtype: dns.TypeA, want: "198.41.0.4"},
		{script: "zone example.org.\nprereq nxdomain knot.example.org.\nupdate add knot2.example.org. 60 A 198.41.0.4", fails: "YXDOMAIN",
			name: "knot2.example.org", qtype: dns.TypeA, want: "NXDOMAIN"},
		{script: "zone example.org.\nupdate del knot.example.org. A", name: "knot.example.org", qtype: dns.TypeA, want: "NXDOMAIN"},
	} {
		out, ok := s.knsupdate(k, step.script)
		if ok == (step.fails != "") || !strings.Contains(out, step.fails) {
			t.Fatalf("knsupdate %q: ok=%v, want failure %q:\n%s", step.script, ok, step.fails, out)
		}
		s.resolves(step.name, step.qtype, step.want)
	}
}

// [P2] A team's records by UPDATE are its records through the API, under
// the same rules; a key reaches its own team and its own scopes only.
func TestUpdateTeams(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, _ := spawn(t, updateOptions(t, d, 2))
			teamA, keyA := s.team(t, "a.example.net")
			_, keyB := s.team(t, "b.example.net")
			kA := s.tsig("/api/admin/accounts/"+teamA+"/tsig-keys", s.admin, nil)
			kB := s.tsig("/api/v1/tsig-keys", keyB, map[string]any{"algorithm": "hmac-sha256"})

			// Mint on the team's own domain; it is served at once (pending).
			s.mustUpdate(kA, "zone a.example.net\nupdate add box.a.example.net 60 A 198.41.0.4")
			s.resolves("box.a.example.net", dns.TypeA, "198.41.0.4")
			list := s.must(200, "GET", "/api/v1/hostnames", keyA, nil)
			id := list.body["hostnames"].([]any)[0].(map[string]any)["id"].(string)
			s.live(t, keyA, id)

			// Minted dual stack in one message, as the rule of addresses allows.
			s.mustUpdate(kA, "zone a.example.net\nupdate add duo.a.example.net 60 A 198.41.0.7\nupdate add duo.a.example.net 60 AAAA 2606:4700::7")
			s.resolves("duo.a.example.net", dns.TypeA, "198.41.0.7")
			s.resolves("duo.a.example.net", dns.TypeAAAA, "2606:4700::7")

			// Dual stack: an AAAA beside the A, as dyndns2 keeps both families.
			s.mustUpdate(kA, "zone a.example.net\nupdate add box.a.example.net 60 AAAA 2606:4700::6")
			s.resolves("box.a.example.net", dns.TypeAAAA, "2606:4700::6")
			s.resolves("box.a.example.net", dns.TypeA, "198.41.0.4")
			s.live(t, keyA, id)

			// Records at and under the hostname, as the record API writes them.
			s.mustUpdate(kA, `zone a.example.net
update add box.a.example.net 300 MX 10 mail.example.com.
update add box.a.example.net 300 TXT "v=spf1 -all"
update add _sip._tcp.box.a.example.net 300 SRV 10 5 5060 sip.example.com.
update add box.a.example.net 300 CAA 0 issue "letsencrypt.org"`)
			recs := s.must(200, "GET", "/api/v1/hostnames/"+id+"/records", keyA, nil)
			if n := len(recs.body["records"].([]any)); n != 4 {
				t.Fatalf("%d records after the UPDATE, want 4: %s", n, recs.raw)
			}
			if got := s.query("_sip._tcp.box.a.example.net", dns.TypeSRV, "udp"); len(got.Answer) != 1 {
				t.Errorf("SRV not served: %v", got)
			}
			s.mustUpdate(kA, "zone a.example.net\nprereq yxrrset box.a.example.net MX\nupdate delete box.a.example.net MX\nupdate delete box.a.example.net TXT \"v=spf1 -all\"")
			recs = s.must(200, "GET", "/api/v1/hostnames/"+id+"/records", keyA, nil)
			if n := len(recs.body["records"].([]any)); n != 2 {
				t.Fatalf("%d records after deleting two, want 2: %s", n, recs.raw)
			}
			// A record rule refuses, with its words: a CNAME is no record type, a bad CAA tag neither.
			s.refusedUpdate(kA, "zone a.example.net\nupdate add www.box.a.example.net 300 CNAME box.a.example.net.", "REFUSED")
			s.refusedUpdate(kA, "zone a.example.net\nupdate add box.a.example.net 300 CAA 0 bogus \"x\"", "REFUSED")

			// Team B's key changes nothing of team A's: not its hostname, not its domain.
			s.refusedUpdate(kB, "zone a.example.net\nupdate delete box.a.example.net A", "REFUSED")
			s.refusedUpdate(kB, "zone a.example.net\nupdate add intruder.a.example.net 60 A 198.41.0.4", "REFUSED")
			s.refusedUpdate(kB, "zone a.example.net\nupdate delete _sip._tcp.box.a.example.net SRV", "REFUSED")
			s.resolves("box.a.example.net", dns.TypeA, "198.41.0.4")
			s.resolves("intruder.a.example.net", dns.TypeA, "NXDOMAIN")

			// A bearer key issues TSIG keys within its own reach only.
			scoped := s.key(t, teamA, []map[string]any{{"scope": "dns01:write", "hostname": id}})
			s.must(403, "POST", "/api/v1/tsig-keys", scoped, map[string]any{"scopes": []map[string]any{{"scope": "hostnames:write"}}})
			s.must(403, "POST", "/api/v1/tsig-keys", scoped, map[string]any{"scopes": []map[string]any{{"scope": "dns01:write"}}})
			narrow := s.tsig("/api/v1/tsig-keys", scoped, nil)
			s.refusedUpdate(narrow, "zone a.example.net\nupdate delete box.a.example.net A", "REFUSED")
			s.mustUpdate(narrow, "zone a.example.net\nupdate add _acme-challenge.box.a.example.net 60 TXT "+strings.Repeat("c", 43))

			// A suspended team's keys sign nothing; restored, they do again.
			s.must(200, "PATCH", "/api/admin/accounts/"+teamA, s.admin, map[string]any{"status": "suspended"})
			s.refusedUpdate(kA, "zone a.example.net\nupdate add _acme-challenge.box.a.example.net 60 TXT "+strings.Repeat("s", 43), "NOTAUTH")
			s.must(200, "PATCH", "/api/admin/accounts/"+teamA, s.admin, map[string]any{"status": "active"})
			s.mustUpdate(kA, "zone a.example.net\nupdate add _acme-challenge.box.a.example.net 60 TXT "+strings.Repeat("s", 43))

			// Lists and revocation through the team's own endpoints.
			if got := s.must(200, "GET", "/api/v1/tsig-keys", keyA, nil); len(got.body["tsig_keys"].([]any)) != 2 {
				t.Errorf("team A's TSIG keys: %s", got.raw)
			}
			s.must(404, "DELETE", "/api/v1/tsig-keys/"+kA.id, keyB, nil)
			s.must(200, "DELETE", "/api/v1/tsig-keys/"+kA.id, keyA, nil)
			s.refusedUpdate(kA, "zone a.example.net\nupdate delete box.a.example.net A", "NOTAUTH")
		})
	}
}

// A key revoked on one node is refused by another on the same store as soon
// as its change feed brings the revocation (as API keys are).
func TestUpdateRevokedAcrossNodes(t *testing.T) {
	t.Parallel()
	o := updateOptions(t, storage.Postgres, 1)
	a, _ := spawn(t, o)
	o.dsn, o.dir = a.dsn, a.dir // the same store and encryption key
	b, _ := spawn(t, o)
	acct, _ := a.account("pro")
	k := a.tsig("/api/admin/accounts/"+acct+"/tsig-keys", a.admin, nil)
	eventually(t, 5*time.Second, func() bool {
		_, ok := b.nsupdate(k, "update add node.example.org 60 A 198.41.0.4")
		return ok
	}, "node B never took the key created on node A")
	a.must(200, "DELETE", "/api/admin/tsig-keys/"+k.id, a.admin, nil)
	a.refusedUpdate(k, "update delete node.example.org A", "NOTAUTH") // at once where it was revoked
	eventually(t, time.Second, func() bool {
		out, ok := b.nsupdate(k, "update delete node.example.org A")
		return !ok && strings.Contains(out, "NOTAUTH")
	}, "node B still takes a key revoked on node A")
	b.resolves("node.example.org", dns.TypeA, "198.41.0.4")
}

// An UPDATE reaches a secondary by NOTIFY and IXFR, with the stock tsig
// plugin (the transfers' key) in the same server block.
func TestUpdateReachesSecondary(t *testing.T) {
	t.Parallel()
	knotPort := freePort(t)
	o := updateOptions(t, storage.SQLite, 1)
	o.block = []string{
		fmt.Sprintf("transfer {\n    to 127.0.0.1:%d\n  }", knotPort),
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}
	s, _ := spawn(t, o)
	acct, _ := s.account("pro")
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	s.mustUpdate(k, "update add first.example.org 60 A 198.41.0.4")
	knot := startSecondary(t, "knot", knotPort, s.dnsAddr)
	synced := func() bool {
		a, okA := serialAt(s.dnsAddr)
		b, okB := serialAt(knot.addr)
		return okA && okB && a == b
	}
	if !within(15*time.Second, synced) {
		t.Fatal("knot did not load the zone")
	}
	s.mustUpdate(k, "update delete first.example.org A\nupdate add first.example.org 60 A 198.41.0.5\nupdate add second.example.org 60 A 198.41.0.6")
	if !within(time.Second, func() bool {
		return sameAnswers(s.dnsAddr, knot.addr, []string{"first.example.org", "second.example.org"}) == ""
	}) {
		t.Fatal("knot did not follow the UPDATE within 1 s")
	}
	if !within(2*time.Second, knot.incremental) {
		t.Error("knot's log shows no incremental transfer (IXFR)")
	}
	// The transfers' key is no key of an account: it signs no UPDATE.
	xfr := tsigKey{name: strings.TrimSuffix(xfrKeyName, "."), secret: xfrSecret}
	s.refusedUpdate(xfr, "update add third.example.org 60 A 198.41.0.7", "NOTAUTH")
}

// TSIG errors as RFC 8945 answers them: a request signed an hour ago is
// BADTIME, signed by the server with its own time so that the client can
// tell clock skew; a key used with another algorithm than its own is
// BADKEY, unsigned.
func TestUpdateTSIGErrors(t *testing.T) {
	t.Parallel()
	s, _ := spawn(t, updateOptions(t, storage.SQLite, 1))
	acct, _ := s.account("pro")
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	send := func(algorithm string, signed time.Time) *dns.TSIG {
		t.Helper()
		m := new(dns.Msg)
		m.SetUpdate("example.org.")
		a, _ := dns.NewRR("skew.example.org. 60 IN A 198.41.0.4")
		m.Insert([]dns.RR{a})
		m.SetTsig(k.name+".", algorithm, 300, signed.Unix())
		c := &dns.Client{Net: "tcp", TsigSecret: map[string]string{k.name + ".": k.secret}}
		r, _, _ := c.Exchange(m, s.dnsAddr) // the client's own check of the answer may fail: read the answer anyway
		if r == nil || r.Rcode != dns.RcodeNotAuth || r.IsTsig() == nil {
			t.Fatalf("%s at %s: %v", algorithm, signed, r)
		}
		return r.IsTsig()
	}
	if rt := send(dns.HmacSHA256, time.Now().Add(-time.Hour)); rt.Error != dns.RcodeBadTime || rt.MACSize == 0 || rt.OtherLen != 6 {
		t.Errorf("an hour's skew: TSIG error %s, MAC size %d, other length %d; want BADTIME, signed, the server's time",
			dns.RcodeToString[int(rt.Error)], rt.MACSize, rt.OtherLen)
	}
	if rt := send(dns.HmacSHA512, time.Now()); rt.Error != dns.RcodeBadKey && rt.Error != dns.RcodeBadSig {
		t.Errorf("another algorithm: TSIG error %s, want BADKEY or BADSIG", dns.RcodeToString[int(rt.Error)])
	}
	s.resolves("skew.example.org", dns.TypeA, "NXDOMAIN")
}
