package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// A store's TSIG key, as an attacker holding one meets the server: with the
// operator's documented tsig block (require AXFR IXFR) and a transfer block
// that lets every address in, a tenant's key transfers only its own team's
// domain, whole; and a key revoked, expired or of a suspended team is
// refused on every path (transfer, UPDATE, signed query) at once, with
// BADKEY, as a key signing with another algorithm than its own is.

// gateOptions are a profile 2 server with dynamic_update, a catalog, and
// the operator's transfer and tsig blocks.
func gateOptions(t *testing.T) options {
	o := updateOptions(t, "", 2)
	o.extra = append(o.extra, "catalog catalog.invalid")
	o.block = []string{
		"transfer {\n    to *\n  }",
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}
	return o
}

// signedXFR transfers zone from addr signed with the key name/secret
// (algorithm hmac-sha256): its records, or the rcode that refused it.
func signedXFR(addr, zone, name, secret string) ([]dns.RR, string) {
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(name, dns.HmacSHA256, 300, time.Now().Unix())
	tr := &dns.Transfer{TsigSecret: map[string]string{name: secret}}
	env, err := tr.In(m, addr)
	if err != nil {
		return nil, err.Error()
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			return nil, e.Error.Error()
		}
		out = append(out, e.RR...)
	}
	return out, ""
}

// signedAsk sends m signed with k (its algorithm may differ from the key's)
// over TCP, as bytes, and reads the answer without checking its signature:
// the answer, or nil if none came.
func signedAsk(t *testing.T, addr string, m *dns.Msg, k tsigKey, algorithm string, signed time.Time, fudge uint16) (r *dns.Msg, raw []byte, mac string) {
	t.Helper()
	m.SetTsig(k.name+".", algorithm, fudge, signed.Unix())
	buf, mac, err := dns.TsigGenerate(m, k.secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn := &dns.Conn{Conn: c}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(buf); err != nil {
		t.Fatal(err)
	}
	raw, err = conn.ReadMsgHeader(nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	r = new(dns.Msg)
	if err := r.Unpack(raw); err != nil {
		t.Fatalf("a malformed answer (%v): % x", err, raw)
	}
	return r, raw, mac
}

// tsigError is r's rcode and TSIG error, as "NOTAUTH/BADKEY".
func tsigError(r *dns.Msg) string {
	out := dns.RcodeToString[r.Rcode]
	if t := r.IsTsig(); t != nil {
		out += "/" + dns.RcodeToString[int(t.Error)]
	}
	return out
}

func soaQuery(zone string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	return m
}

func updateMsg(zone, rr string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	a, _ := dns.NewRR(rr)
	m.Insert([]dns.RR{a})
	return m
}

func TestTSIGKeyTransfers(t *testing.T) {
	eachDialect(t, gateOptions(t), func(t *testing.T, s *server) {
		acctA, keyA := s.team(t, "a.example.net")
		_, keyB := s.team(t, "b.example.net")
		s.recHost(t, keyA, "www", "198.41.0.4")
		s.recHost(t, keyB, "web", "198.41.0.5")
		ka := s.tsig("/api/v1/tsig-keys", keyA, nil)
		kb := s.tsig("/api/v1/tsig-keys", keyB, nil)
		// A key of team A limited to one hostname does not reach the zone whole.
		hid, _ := s.recHost(t, keyA, "dbase", "198.41.0.6")
		narrow := s.tsig("/api/admin/accounts/"+acctA+"/tsig-keys", s.admin, map[string]any{
			"scopes": []map[string]any{{"scope": "hostnames:write", "hostname": hid}}})

		cases := []struct {
			name         string
			zone         string
			key          tsigKey
			transferable bool
		}{
			{"own team domain", "a.example.net", ka, true},
			{"another team's domain", "b.example.net", ka, false},
			{"the other team's own", "b.example.net", kb, true},
			{"a pool domain", "example.org", ka, false},
			{"the catalog", "catalog.invalid", ka, false},
			{"own domain, one hostname's reach", "a.example.net", narrow, false},
		}
		for _, tc := range cases {
			rrs, refused := signedXFR(s.dnsAddr, tc.zone, tc.key.name+".", tc.key.secret)
			if tc.transferable != (refused == "") {
				t.Errorf("%s (%s with %s): %d records, refused %q; want transferable=%v", tc.name, tc.zone, tc.key.name, len(rrs), refused, tc.transferable)
			}
			// A policy's refusal is REFUSED (rcode 5), never a server failure.
			if !tc.transferable && !strings.Contains(refused, "rcode: 5") {
				t.Errorf("%s (%s with %s): refused %q, want REFUSED", tc.name, tc.zone, tc.key.name, refused)
			}
		}
		// The operator's key transfers every zone, the catalog included.
		for _, zone := range []string{"a.example.net", "b.example.net", "example.org", "catalog.invalid"} {
			if rrs, refused := signedXFR(s.dnsAddr, zone, xfrKeyName, xfrSecret); refused != "" || len(rrs) < 2 {
				t.Errorf("the operator's key, %s: %d records, refused %q", zone, len(rrs), refused)
			}
		}
		if refusedKey() == 0 {
			t.Errorf("the refusals are not counted in transfers_refused_total{reason=\"key\"}")
		}

		// Revoked: refused at once on every path, without a reload.
		s.must(200, "DELETE", "/api/v1/tsig-keys/"+ka.id, keyA, nil)
		if _, refused := signedXFR(s.dnsAddr, "a.example.net", ka.name+".", ka.secret); refused == "" {
			t.Errorf("a revoked key still transfers its team's domain")
		}
		if r, _, _ := signedAsk(t, s.dnsAddr, soaQuery("a.example.net"), ka, dns.HmacSHA256, time.Now(), 300); tsigError(r) != "NOTAUTH/BADKEY" {
			t.Errorf("a revoked key's signed query: %s, want NOTAUTH/BADKEY", tsigError(r))
		}
		if r, _, _ := signedAsk(t, s.dnsAddr, updateMsg("a.example.net", "new.a.example.net. 60 IN A 198.41.0.7"), ka, dns.HmacSHA256, time.Now(), 300); tsigError(r) != "NOTAUTH/BADKEY" {
			t.Errorf("a revoked key's UPDATE: %s, want NOTAUTH/BADKEY", tsigError(r))
		}
	})
}

// refusedKey reads coredns_hostname_transfers_refused_total{reason="key"}.
func refusedKey() float64 {
	return counterValue("coredns_hostname_transfers_refused_total", "reason", "key")
}

// A key of a suspended team, an expired key, and a key used with another
// algorithm than its own: BADKEY on every path, with or without a tsig
// block; restored, the team's key signs again.
func TestTSIGKeyState(t *testing.T) {
	for _, block := range []bool{true, false} {
		t.Run(fmt.Sprintf("tsig block %v", block), func(t *testing.T) {
			o := gateOptions(t)
			if !block {
				o.block = nil
			}
			eachDialect(t, o, func(t *testing.T, s *server) {
				acct, key := s.team(t, "state.example.net")
				k := s.tsig("/api/v1/tsig-keys", key, nil)
				paths := map[string]func(tsigKey, string) *dns.Msg{
					"signed query": func(k tsigKey, alg string) *dns.Msg {
						r, _, _ := signedAsk(t, s.dnsAddr, soaQuery("state.example.net"), k, alg, time.Now(), 300)
						return r
					},
					"UPDATE": func(k tsigKey, alg string) *dns.Msg {
						r, _, _ := signedAsk(t, s.dnsAddr, updateMsg("state.example.net", "p.state.example.net. 60 IN A 198.41.0.8"), k, alg, time.Now(), 300)
						return r
					},
					"AXFR": func(k tsigKey, alg string) *dns.Msg {
						m := new(dns.Msg)
						m.SetAxfr("state.example.net.")
						r, _, _ := signedAsk(t, s.dnsAddr, m, k, alg, time.Now(), 300)
						return r
					},
				}
				expect := func(when, want string, k tsigKey, alg string) {
					t.Helper()
					for name, ask := range paths {
						if got := tsigError(ask(k, alg)); (got == "NOTAUTH/BADKEY") != (want == "NOTAUTH/BADKEY") {
							t.Errorf("%s, %s: %s, want %s", when, name, got, want)
						}
					}
				}
				expect("live", "signed", k, dns.HmacSHA256)
				expect("signed with hmac-sha512 on an hmac-sha256 key", "NOTAUTH/BADKEY", k, dns.HmacSHA512)

				suspended, active := "suspended", "active"
				s.must(200, "PATCH", "/api/admin/accounts/"+acct, s.admin, map[string]any{"status": suspended})
				expect("the team suspended", "NOTAUTH/BADKEY", k, dns.HmacSHA256)
				s.must(200, "PATCH", "/api/admin/accounts/"+acct, s.admin, map[string]any{"status": active})
				expect("the team restored", "signed", k, dns.HmacSHA256)

				// A key issued by a bearer key that expires expires with it.
				expires := time.Now().Add(8 * time.Second).Truncate(time.Second)
				short := s.must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{"name": "short",
					"expires_at": expires.UTC().Format(time.RFC3339)}).str("key")
				ks := s.tsig("/api/v1/tsig-keys", short, nil)
				// The new key reaches the DNS servers by a reload: wait for it to sign.
				eventually(t, 10*time.Second, func() bool {
					return tsigError(paths["signed query"](ks, dns.HmacSHA256)) == "NOERROR/NOERROR"
				}, "the new key signs")
				time.Sleep(time.Until(expires) + time.Second)
				expect("expired", "NOTAUTH/BADKEY", ks, dns.HmacSHA256)
			})
		})
	}
}

// The window of a signed message is at most 300 s whatever fudge the
// client sends (a captured message cannot be replayed for 18 hours), and
// the BADTIME answer to a query with EDNS is well formed: its OPT before
// the TSIG, signed over the client's time with the server's in Other Data.
func TestTSIGWindow(t *testing.T) {
	for _, block := range []bool{true, false} {
		t.Run(fmt.Sprintf("tsig block %v", block), func(t *testing.T) {
			o := gateOptions(t)
			if !block {
				o.block = nil
			}
			testTSIGWindow(t, start(t, o))
		})
	}
}

func testTSIGWindow(t *testing.T, s *server) {
	acct, _ := s.team(t, "w.example.net")
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	ahead := time.Now().Add(3000 * time.Second)
	// A fudge of 65535 is held to 300 s; with 300 the client's own window
	// refuses it (the BADTIME that went out malformed before).
	type window struct {
		name  string
		m     func() *dns.Msg
		fudge uint16
	}
	var cases []window
	for _, fudge := range []uint16{65535, 300} {
		cases = append(cases,
			window{"UPDATE", func() *dns.Msg { return updateMsg("w.example.net", "f.w.example.net. 60 IN A 198.41.0.9") }, fudge},
			window{"query", func() *dns.Msg { return soaQuery("w.example.net") }, fudge},
			window{"query with EDNS", func() *dns.Msg { return soaQuery("w.example.net").SetEdns0(1232, true) }, fudge},
			window{"UPDATE with EDNS", func() *dns.Msg {
				return updateMsg("w.example.net", "g.w.example.net. 60 IN A 198.41.0.9").SetEdns0(1232, false)
			}, fudge})
	}
	for _, tc := range cases {
		m := tc.m()
		edns := m.IsEdns0() != nil
		tc.name = fmt.Sprintf("%s, fudge %d", tc.name, tc.fudge)
		r, raw, mac := signedAsk(t, s.dnsAddr, m, k, dns.HmacSHA256, ahead, tc.fudge)
		rt := r.IsTsig()
		if rt == nil || r.Rcode != dns.RcodeNotAuth || rt.Error != dns.RcodeBadTime {
			t.Errorf("%s, 3000 s ahead: %s, want NOTAUTH/BADTIME", tc.name, tsigError(r))
			continue
		}
		if rt.MACSize == 0 || rt.OtherLen != 6 || rt.TimeSigned != uint64(ahead.Unix()) {
			t.Errorf("%s: BADTIME with MAC size %d, other length %d, time %d; want signed over the client's time %d with the server's",
				tc.name, rt.MACSize, rt.OtherLen, rt.TimeSigned, ahead.Unix())
		}
		if edns && r.IsEdns0() == nil {
			t.Errorf("%s: BADTIME without the OPT", tc.name)
		}
		// The MAC is the key's over the answer as sent (miekg's TsigVerify
		// reads no NOTAUTH message: the MAC is made again and compared).
		resp := new(dns.Msg)
		if err := resp.Unpack(raw); err != nil {
			t.Fatal(err)
		}
		again := *resp.IsTsig()
		again.MAC, again.MACSize = "", 0
		resp.Extra[len(resp.Extra)-1] = &again
		if _, want, err := dns.TsigGenerate(resp, k.secret, mac, false); err != nil || want != rt.MAC {
			t.Errorf("%s: the BADTIME answer's MAC %s, want %s (%v)", tc.name, rt.MAC, want, err)
		}
	}
	s.resolves("f.w.example.net", dns.TypeA, "NXDOMAIN")
	// Within 300 s the same key signs.
	if r, _, _ := signedAsk(t, s.dnsAddr, soaQuery("w.example.net"), k, dns.HmacSHA256, time.Now().Add(-200*time.Second), 300); tsigError(r) != "NOERROR/NOERROR" {
		t.Errorf("200 s behind: %s, want NOERROR", tsigError(r))
	}
}
