package hostname

import (
	"net"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
)

// corefileSeeds are hostname blocks, whole and broken: every option, wrong
// arities, quoting, nested braces, and text that is not a Corefile at all.
var corefileSeeds = []string{
	block(minimal),
	block(minimal + "profile 2\nstorage postgres postgres://u@127.0.0.1/db?sslmode=disable\napi 127.0.0.1:8080\n" +
		"base_url http://127.0.0.1:8080/\nadmin_token_file ./data/admin.token\ndomain dyn.example.org Example.NET.\n" +
		"idle_expiry 1h\naddress_ttl 300\nfeed_poll 200ms\nrecord_write_per_minute 5\nplan_cap pro 7\n" +
		"diagnose_budget 2s\ndiagnose_per_minute 3\ncert_renew_at 0.5\nacme_ca letsencrypt https://127.0.0.1:14000/dir root.pem\n" +
		"acme_eab letsencrypt kid hmac\nacme_email ops@example.org\ncert_encryption_key_file ./k\nresolver 127.0.0.1 [::1]:5300\n" +
		"ct_log http://127.0.0.1:8090\nblocked_labels ./blocked.txt\n"),
	block(minimal + "storage postgres \"host=a,b port=1,2 target_session_attrs=read-write\" readonly\nmax_lag 30s\n"),
	block(minimal + "storage sqlite a.db readonly\nmax_lag 0s\n"),
	block("nameserver ns1.example.org [2001:db8::53]:53\nnameserver ns2.example.net\n"),
	block("nameserver ns1.example.org 192.0.2.53:0\n"),
	block("nameserver ns1.example.org 192.0.2.53:99999\n"),
	block("nameserver ns1.example.org fe80::1%eth0\n"),
	block("nameserver example\n"),
	block(minimal + "domain example.org..\n"),
	block(minimal + "address_ttl 0\n"),
	block(minimal + "address_ttl 18446744073709551616\n"),
	block(minimal + "idle_expiry -1s\n"),
	block(minimal + "acme_eab google k h\n"),
	block(minimal + "plan_cap\n"),
	block(minimal + "api :8080\nbase_url ftp://x\n"),
	block(minimal + "{\n}\n"),
	block(minimal + "profile \"2\"\n"),
	block(minimal + "resolver `127.0.0.1`\n"),
	"hostname",
	"hostname {",
	"hostname }",
	"hostname example.org {\n" + minimal + "}",
	block(minimal) + "\n" + block(minimal),
	"{\n}",
	"\"",
	"hostname {\n\x00\n}",
	"",
}

// FuzzParseCorefile feeds arbitrary text to parse, as a Corefile's hostname
// block reaches it, and then builds the handler from the result: neither may
// panic, and a config parse accepts must hold what ServeDNS relies on.
func FuzzParseCorefile(f *testing.F) {
	for _, s := range corefileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		cfg, err := parse(caddy.NewTestController("dns", input))
		if err != nil {
			return
		}
		if len(cfg.app.Nameservers) == 0 {
			t.Fatalf("parse accepted %q without a nameserver", input)
		}
		if cfg.app.Profile != 1 && cfg.app.Profile != 2 || cfg.addressTTL < 1 || cfg.addressTTL > 86400 ||
			cfg.app.IdleExpiry <= 0 || cfg.app.FeedPoll <= 0 {
			t.Fatalf("parse accepted %q: profile %d, address TTL %d, idle %s, poll %s",
				input, cfg.app.Profile, cfg.addressTTL, cfg.app.IdleExpiry, cfg.app.FeedPoll)
		}
		for _, d := range cfg.app.Domains {
			if d == "" || strings.HasSuffix(d, ".") || strings.ToLower(d) != d {
				t.Fatalf("parse accepted %q with domain %q", input, d)
			}
		}
		for _, ns := range cfg.app.Nameservers {
			if !dns.IsFqdn(ns.Name) || strings.HasSuffix(ns.Name, "..") {
				t.Fatalf("parse accepted %q with nameserver %q", input, ns.Name)
			}
			if ns.Addr != "" {
				if _, _, err := net.SplitHostPort(ns.Addr); err != nil {
					t.Fatalf("parse accepted %q with nameserver address %q", input, ns.Addr)
				}
			}
		}
		h := newHandler(cfg)
		if len(nsNames(h)) != len(cfg.app.Nameservers) {
			t.Fatalf("%d NS targets for %d nameservers", len(nsNames(h)), len(cfg.app.Nameservers))
		}
		// The SOA's MNAME is the first of them: it must pack.
		soa := &dns.SOA{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: nsNames(h)[0], Mbox: "hostmaster.example.org."}
		if _, err := dns.PackRR(soa, make([]byte, 1024), 0, nil, false); err != nil {
			t.Fatalf("parse accepted %q: SOA with MNAME %q does not pack: %v", input, nsNames(h)[0], err)
		}
	})
}
