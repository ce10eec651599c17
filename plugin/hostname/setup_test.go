package hostname

import (
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/storage"
)

// minimal is the smallest valid block body: a nameserver is required.
const minimal = "nameserver ns1.example.org 192.0.2.53\n"

func block(body string) string { return "hostname {\n" + body + "}" }

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		input     string
		shouldErr bool
		check     func(t *testing.T, cfg *config)
	}{
		// Defaults and the block itself.
		{"defaults", block(minimal), false, func(t *testing.T, cfg *config) {
			if cfg.app.Profile != 1 {
				t.Errorf("profile = %d, want 1", cfg.app.Profile)
			}
			if cfg.app.Dialect != storage.SQLite || cfg.app.DSN != "./data/hostmint.db" {
				t.Errorf("storage = %s %s, want sqlite ./data/hostmint.db", cfg.app.Dialect, cfg.app.DSN)
			}
			if cfg.app.API != "127.0.0.1:8080" {
				t.Errorf("api = %q, want 127.0.0.1:8080", cfg.app.API)
			}
			if cfg.app.BaseURL != "http://127.0.0.1:8080" {
				t.Errorf("baseURL = %q, want http://127.0.0.1:8080", cfg.app.BaseURL)
			}
			if cfg.app.AdminTokenFile != "./data/admin.token" {
				t.Errorf("adminTokenFile = %q, want ./data/admin.token", cfg.app.AdminTokenFile)
			}
			if cfg.app.IdleExpiry != 168*time.Hour {
				t.Errorf("idleExpiry = %s, want 168h", cfg.app.IdleExpiry)
			}
			if cfg.addressTTL != 60 {
				t.Errorf("addressTTL = %d, want 60", cfg.addressTTL)
			}
			if cfg.app.FeedPoll != time.Second {
				t.Errorf("feedPoll = %s, want 1s", cfg.app.FeedPoll)
			}
			if !maps.Equal(cfg.app.Caps, plans.DefaultCaps()) {
				t.Errorf("caps = %v, want %v", cfg.app.Caps, plans.DefaultCaps())
			}
			if len(cfg.app.Domains) != 0 || len(cfg.app.Resolvers) != 0 || len(cfg.app.ACMECAs) != 0 {
				t.Errorf("domains, resolvers, acme CAs = %v %v %v, want none", cfg.app.Domains, cfg.app.Resolvers, cfg.app.ACMECAs)
			}
			if cfg.app.BlockedLabels != "" || cfg.app.ACMEEmail != "" || cfg.app.CertKeyFile != "" || cfg.app.CTLog != "" {
				t.Errorf("blocked_labels, acme_email, cert key, ct_log = %q %q %q %q, want empty",
					cfg.app.BlockedLabels, cfg.app.ACMEEmail, cfg.app.CertKeyFile, cfg.app.CTLog)
			}
		}},
		{"no block", "hostname", true, nil},
		{"empty block", block(""), true, nil},
		{"no nameserver", block("domain example.org\n"), true, nil},
		{"args on the hostname line", "hostname example.org {\n" + minimal + "}", true, nil},
		{"unknown option", block(minimal + "fallthrough\n"), true, nil},

		// profile
		{"profile 2", block(minimal + "profile 2\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.Profile != 2 {
				t.Errorf("profile = %d, want 2", cfg.app.Profile)
			}
		}},
		{"profile 1", block(minimal + "profile 1\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.Profile != 1 {
				t.Errorf("profile = %d, want 1", cfg.app.Profile)
			}
		}},
		{"profile 3", block(minimal + "profile 3\n"), true, nil},
		{"profile not a number", block(minimal + "profile two\n"), true, nil},
		{"profile no arg", block(minimal + "profile\n"), true, nil},
		{"profile two args", block(minimal + "profile 1 2\n"), true, nil},

		// storage
		{"storage sqlite", block(minimal + "storage sqlite /var/lib/hostmint/db.sqlite\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.Dialect != storage.SQLite || cfg.app.DSN != "/var/lib/hostmint/db.sqlite" {
				t.Errorf("storage = %s %s", cfg.app.Dialect, cfg.app.DSN)
			}
		}},
		{"storage postgres", block(minimal + "storage postgres postgres://hostmint@127.0.0.1:5432/hostmint?sslmode=disable\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.Dialect != storage.Postgres || cfg.app.DSN != "postgres://hostmint@127.0.0.1:5432/hostmint?sslmode=disable" {
				t.Errorf("storage = %s %s", cfg.app.Dialect, cfg.app.DSN)
			}
		}},
		{"storage unknown dialect", block(minimal + "storage mysql hostmint@tcp(127.0.0.1)/db\n"), true, nil},
		{"storage no dsn", block(minimal + "storage sqlite\n"), true, nil},
		{"storage three args", block(minimal + "storage sqlite a.db b.db\n"), true, nil},
		{"storage readonly", block(minimal + "storage postgres \"host=standby user=ro dbname=h\" readonly\n"), false, func(t *testing.T, cfg *config) {
			if !cfg.app.ReadOnly || cfg.app.DSN != "host=standby user=ro dbname=h" {
				t.Errorf("readonly = %v, dsn %q", cfg.app.ReadOnly, cfg.app.DSN)
			}
			if cfg.app.API != "" || cfg.app.BaseURL != "" {
				t.Errorf("a read-only node without api has api %q, base_url %q; want none", cfg.app.API, cfg.app.BaseURL)
			}
			if cfg.app.FeedPoll != readOnlyPoll {
				t.Errorf("feed_poll = %v, want %v on a read-only node", cfg.app.FeedPoll, readOnlyPoll)
			}
		}},
		{"storage readonly with api and feed_poll", block(minimal + "storage postgres postgres://ro@standby/h readonly\napi 127.0.0.1:8081\nfeed_poll 2s\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.API != "127.0.0.1:8081" || cfg.app.FeedPoll != 2*time.Second {
				t.Errorf("api %q, feed_poll %v; want the block's", cfg.app.API, cfg.app.FeedPoll)
			}
		}},
		{"storage sqlite readonly", block(minimal + "storage sqlite a.db readonly\n"), true, nil},
		{"storage postgres other third word", block(minimal + "storage postgres postgres://h/db standby\n"), true, nil},
		{"max_lag", block(minimal + "max_lag 30s\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.MaxLag != 30*time.Second {
				t.Errorf("max_lag = %v", cfg.app.MaxLag)
			}
		}},
		{"max_lag negative", block(minimal + "max_lag -1s\n"), true, nil},
		{"catalog", block(minimal + "catalog Catalog.Invalid.\n"), false, func(t *testing.T, cfg *config) {
			if cfg.catalog != "catalog.invalid." {
				t.Errorf("catalog = %q", cfg.catalog)
			}
		}},
		{"catalog a served domain", block(minimal + "domain example.org\ncatalog example.org\n"), true, nil},
		{"catalog not a name", block(minimal + "catalog a..b\n"), true, nil},

		// api and base_url
		{"api sets derived base_url", block(minimal + "api 0.0.0.0:9090\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.API != "0.0.0.0:9090" || cfg.app.BaseURL != "http://0.0.0.0:9090" {
				t.Errorf("api, baseURL = %q %q", cfg.app.API, cfg.app.BaseURL)
			}
		}},
		{"api ipv6", block(minimal + "api [::1]:8080\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.API != "[::1]:8080" {
				t.Errorf("api = %q", cfg.app.API)
			}
		}},
		{"api without port", block(minimal + "api 127.0.0.1\n"), true, nil},
		{"api no arg", block(minimal + "api\n"), true, nil},
		{"base_url overrides api and loses its trailing slash", block(minimal + "api 127.0.0.1:9090\nbase_url https://dns.example.org/\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.BaseURL != "https://dns.example.org" {
				t.Errorf("baseURL = %q, want https://dns.example.org", cfg.app.BaseURL)
			}
		}},
		{"base_url http with path", block(minimal + "base_url http://example.org:8080/hostmint\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.BaseURL != "http://example.org:8080/hostmint" {
				t.Errorf("baseURL = %q", cfg.app.BaseURL)
			}
		}},
		{"base_url other scheme", block(minimal + "base_url ftp://example.org\n"), true, nil},
		{"base_url no scheme", block(minimal + "base_url example.org\n"), true, nil},
		{"base_url no host", block(minimal + "base_url https://\n"), true, nil},
		{"base_url no arg", block(minimal + "base_url\n"), true, nil},

		// admin_token_file
		{"admin_token_file", block(minimal + "admin_token_file /etc/hostmint/admin.token\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.AdminTokenFile != "/etc/hostmint/admin.token" {
				t.Errorf("adminTokenFile = %q", cfg.app.AdminTokenFile)
			}
		}},
		{"admin_token_file no arg", block(minimal + "admin_token_file\n"), true, nil},

		// domain
		{"domain several, normalised", block(minimal + "domain example.org Example.NET. dyn.EXAMPLE.com\ndomain example.info\n"), false, func(t *testing.T, cfg *config) {
			want := []string{"example.org", "example.net", "dyn.example.com", "example.info"}
			if !slices.Equal(cfg.app.Domains, want) {
				t.Errorf("domains = %q, want %q", cfg.app.Domains, want)
			}
		}},
		{"domain single label", block(minimal + "domain org\n"), true, nil},
		{"domain bad character", block(minimal + "domain exa_mple.org\n"), true, nil},
		{"domain leading hyphen", block(minimal + "domain -example.org\n"), true, nil},
		{"domain one bad among good", block(minimal + "domain example.org example..net\n"), true, nil},
		{"domain no arg", block(minimal + "domain\n"), true, nil},

		// nameserver
		{"nameserver with and without address", block("nameserver NS1.Example.ORG. 192.0.2.53:5353\nnameserver ns2.example.net\n"), false, func(t *testing.T, cfg *config) {
			want := []app.Nameserver{{Name: "ns1.example.org.", Addr: "192.0.2.53:5353"}, {Name: "ns2.example.net."}}
			if !slices.Equal(cfg.app.Nameservers, want) {
				t.Errorf("nameservers = %+v, want %+v", cfg.app.Nameservers, want)
			}
		}},
		{"nameserver ip without port gets 53", block("nameserver ns1.example.org 192.0.2.53\n"), false, func(t *testing.T, cfg *config) {
			if got := cfg.app.Nameservers[0].Addr; got != "192.0.2.53:53" {
				t.Errorf("addr = %q, want 192.0.2.53:53", got)
			}
		}},
		{"nameserver ipv6 without port gets 53", block("nameserver ns1.example.org 2001:db8::53\n"), false, func(t *testing.T, cfg *config) {
			if got := cfg.app.Nameservers[0].Addr; got != "[2001:db8::53]:53" {
				t.Errorf("addr = %q, want [2001:db8::53]:53", got)
			}
		}},
		{"nameserver ipv6 with port", block("nameserver ns1.example.org [2001:db8::53]:5353\n"), false, func(t *testing.T, cfg *config) {
			if got := cfg.app.Nameservers[0].Addr; got != "[2001:db8::53]:5353" {
				t.Errorf("addr = %q, want [2001:db8::53]:5353", got)
			}
		}},
		{"nameserver address is a name", block("nameserver ns1.example.org ns.example.net\n"), true, nil},
		{"nameserver address is a name with port", block("nameserver ns1.example.org ns.example.net:53\n"), true, nil},
		{"nameserver bad ip", block("nameserver ns1.example.org 192.0.2.300\n"), true, nil},
		{"nameserver bad name", block("nameserver ns_1.example.org 192.0.2.53\n"), true, nil},
		{"nameserver single label", block("nameserver localhost\n"), true, nil},
		{"nameserver no arg", block("nameserver\n"), true, nil},
		{"nameserver three args", block("nameserver ns1.example.org 192.0.2.53 192.0.2.54\n"), true, nil},

		// idle_expiry and feed_poll
		{"idle_expiry", block(minimal + "idle_expiry 24h\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.IdleExpiry != 24*time.Hour {
				t.Errorf("idleExpiry = %s, want 24h", cfg.app.IdleExpiry)
			}
		}},
		{"idle_expiry zero", block(minimal + "idle_expiry 0s\n"), true, nil},
		{"idle_expiry negative", block(minimal + "idle_expiry -1h\n"), true, nil},
		{"idle_expiry days are not a Go duration", block(minimal + "idle_expiry 7d\n"), true, nil},
		{"idle_expiry no arg", block(minimal + "idle_expiry\n"), true, nil},
		{"idle_expiry two args", block(minimal + "idle_expiry 1h 2h\n"), true, nil},
		{"feed_poll", block(minimal + "feed_poll 250ms\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.FeedPoll != 250*time.Millisecond {
				t.Errorf("feedPoll = %s, want 250ms", cfg.app.FeedPoll)
			}
		}},
		{"feed_poll zero", block(minimal + "feed_poll 0\n"), true, nil},
		{"feed_poll garbage", block(minimal + "feed_poll often\n"), true, nil},
		{"feed_poll no arg", block(minimal + "feed_poll\n"), true, nil},

		// dynamic_update
		{"dynamic_update", block(minimal + "dynamic_update\n"), false, func(t *testing.T, cfg *config) {
			if !cfg.app.DynamicUpdate {
				t.Error("dynamic_update not set")
			}
		}},
		{"dynamic_update off by default", block(minimal), false, func(t *testing.T, cfg *config) {
			if cfg.app.DynamicUpdate {
				t.Error("dynamic_update set without the option")
			}
		}},
		{"dynamic_update with an argument", block(minimal + "dynamic_update yes\n"), true, nil},
		// acme_update_per_minute
		{"acme_update_per_minute", block(minimal + "acme_update_per_minute 5\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.ACMEUpdates != 5 {
				t.Errorf("acmeUpdates = %d, want 5", cfg.app.ACMEUpdates)
			}
		}},
		{"acme_update_per_minute default", block(minimal), false, func(t *testing.T, cfg *config) {
			if cfg.app.ACMEUpdates != 0 {
				t.Errorf("acmeUpdates = %d, want 0 (hostnames.DefaultACMEUpdates)", cfg.app.ACMEUpdates)
			}
		}},
		{"acme_update_per_minute zero", block(minimal + "acme_update_per_minute 0\n"), true, nil},
		{"acme_update_per_minute garbage", block(minimal + "acme_update_per_minute lots\n"), true, nil},
		{"acme_update_per_minute two args", block(minimal + "acme_update_per_minute 1 2\n"), true, nil},

		// change_retention
		{"change_retention default", block(minimal), false, func(t *testing.T, cfg *config) {
			if want := (storage.ChangeRetention{Age: 24 * time.Hour, Count: 100_000}); cfg.app.Changes != want {
				t.Errorf("changes = %+v, want %+v", cfg.app.Changes, want)
			}
		}},
		{"change_retention duration", block(minimal + "change_retention 72h\n"), false, func(t *testing.T, cfg *config) {
			if want := (storage.ChangeRetention{Age: 72 * time.Hour, Count: 100_000}); cfg.app.Changes != want {
				t.Errorf("changes = %+v, want %+v", cfg.app.Changes, want)
			}
		}},
		{"change_retention both", block(minimal + "change_retention 1h 5000\n"), false, func(t *testing.T, cfg *config) {
			if want := (storage.ChangeRetention{Age: time.Hour, Count: 5000}); cfg.app.Changes != want {
				t.Errorf("changes = %+v, want %+v", cfg.app.Changes, want)
			}
		}},
		{"change_retention under a minute", block(minimal + "change_retention 30s\n"), true, nil},
		{"change_retention few ids", block(minimal + "change_retention 1h 999\n"), true, nil},
		{"change_retention count garbage", block(minimal + "change_retention 1h many\n"), true, nil},
		{"change_retention no arg", block(minimal + "change_retention\n"), true, nil},
		{"change_retention three args", block(minimal + "change_retention 1h 5000 6000\n"), true, nil},

		// address_ttl
		{"address_ttl 1", block(minimal + "address_ttl 1\n"), false, func(t *testing.T, cfg *config) {
			if cfg.addressTTL != 1 {
				t.Errorf("addressTTL = %d, want 1", cfg.addressTTL)
			}
		}},
		{"address_ttl 86400", block(minimal + "address_ttl 86400\n"), false, func(t *testing.T, cfg *config) {
			if cfg.addressTTL != 86400 {
				t.Errorf("addressTTL = %d, want 86400", cfg.addressTTL)
			}
		}},
		{"address_ttl 0", block(minimal + "address_ttl 0\n"), true, nil},
		{"address_ttl 86401", block(minimal + "address_ttl 86401\n"), true, nil},
		{"address_ttl negative", block(minimal + "address_ttl -5\n"), true, nil},
		{"address_ttl past uint32", block(minimal + "address_ttl 4294967356\n"), true, nil},
		{"address_ttl duration", block(minimal + "address_ttl 60s\n"), true, nil},
		{"address_ttl no arg", block(minimal + "address_ttl\n"), true, nil},

		// plan_cap
		{"plan_cap", block(minimal + "plan_cap free 10\nplan_cap enterprise 5000\nplan_cap pro 0\n"), false, func(t *testing.T, cfg *config) {
			want := plans.DefaultCaps()
			want[plans.Free] = 10
			want[plans.Pro] = 0
			want["enterprise"] = 5000
			if !maps.Equal(cfg.app.Caps, want) {
				t.Errorf("caps = %v, want %v", cfg.app.Caps, want)
			}
			// The block's caps are its own copy.
			if plans.DefaultCaps()[plans.Free] != 25 {
				t.Errorf("plan_cap changed plans.DefaultCaps(): %v", plans.DefaultCaps())
			}
		}},
		{"plan_cap negative", block(minimal + "plan_cap free -1\n"), true, nil},
		{"plan_cap not a number", block(minimal + "plan_cap free many\n"), true, nil},
		{"plan_cap no count", block(minimal + "plan_cap free\n"), true, nil},
		{"plan_cap three args", block(minimal + "plan_cap free 1 2\n"), true, nil},

		// blocked_labels
		{"blocked_labels", block(minimal + "blocked_labels /etc/hostmint/blocked.txt\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.BlockedLabels != "/etc/hostmint/blocked.txt" {
				t.Errorf("blockedLabels = %q", cfg.app.BlockedLabels)
			}
		}},
		{"blocked_labels no arg", block(minimal + "blocked_labels\n"), true, nil},

		// trusted_proxy
		{"trusted_proxy several, repeated, masked", block(minimal +
			"trusted_proxy 127.0.0.1/32 10.1.2.3/8\ntrusted_proxy fd00::/8\n"), false, func(t *testing.T, cfg *config) {
			want := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
			if !slices.Equal(cfg.app.TrustedProxies, want) {
				t.Errorf("trustedProxies = %v, want %v", cfg.app.TrustedProxies, want)
			}
		}},
		{"trusted_proxy no argument", block(minimal + "trusted_proxy\n"), true, nil},
		{"trusted_proxy bare address", block(minimal + "trusted_proxy 10.0.0.1\n"), true, nil},
		{"trusted_proxy not a CIDR", block(minimal + "trusted_proxy proxy.example\n"), true, nil},
		// acme_ca and acme_email
		{"acme_ca letsencrypt and google with root", block(minimal +
			"acme_ca letsencrypt https://acme-v02.api.letsencrypt.org/directory\n" +
			"acme_ca google https://dv.acme-v02.api.pki.goog/directory /etc/hostmint/gts-root.pem\n"), false, func(t *testing.T, cfg *config) {
			want := map[string]app.ACMECA{
				"letsencrypt": {Directory: "https://acme-v02.api.letsencrypt.org/directory"},
				"google":      {Directory: "https://dv.acme-v02.api.pki.goog/directory", Root: "/etc/hostmint/gts-root.pem"},
			}
			if !maps.Equal(cfg.app.ACMECAs, want) {
				t.Errorf("acmeCAs = %+v, want %+v", cfg.app.ACMECAs, want)
			}
		}},
		{"acme_ca plain http directory (a test CA)", block(minimal + "acme_ca letsencrypt http://127.0.0.1:14000/dir\n"), false, func(t *testing.T, cfg *config) {
			if got := cfg.app.ACMECAs["letsencrypt"].Directory; got != "http://127.0.0.1:14000/dir" {
				t.Errorf("directory = %q", got)
			}
		}},
		{"acme_ca unknown name", block(minimal + "acme_ca zerossl https://acme.zerossl.com/v2/DV90\n"), true, nil},
		{"acme_ca not a url", block(minimal + "acme_ca letsencrypt acme-v02.api.letsencrypt.org\n"), true, nil},
		{"acme_ca other scheme", block(minimal + "acme_ca letsencrypt ftp://example.org/directory\n"), true, nil},
		{"acme_ca no directory", block(minimal + "acme_ca letsencrypt\n"), true, nil},
		{"acme_ca four args", block(minimal + "acme_ca google https://dv.acme-v02.api.pki.goog/directory root.pem extra\n"), true, nil},
		{"acme_email", block(minimal + "acme_email hostmaster@example.org\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.ACMEEmail != "hostmaster@example.org" {
				t.Errorf("acmeEmail = %q", cfg.app.ACMEEmail)
			}
		}},
		{"acme_email no arg", block(minimal + "acme_email\n"), true, nil},

		// cert_encryption_key_file
		{"cert_encryption_key_file", block(minimal + "cert_encryption_key_file /etc/hostmint/cert.key\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.CertKeyFile != "/etc/hostmint/cert.key" {
				t.Errorf("certKeyFile = %q", cfg.app.CertKeyFile)
			}
		}},
		{"cert_encryption_key_file two args", block(minimal + "cert_encryption_key_file a b\n"), true, nil},

		// resolver
		{"resolver adds port 53", block(minimal + "resolver 192.0.2.1 192.0.2.2:5353 2001:db8::1\nresolver [2001:db8::2]:53\n"), false, func(t *testing.T, cfg *config) {
			want := []string{"192.0.2.1:53", "192.0.2.2:5353", "[2001:db8::1]:53", "[2001:db8::2]:53"}
			if !slices.Equal(cfg.app.Resolvers, want) {
				t.Errorf("resolvers = %q, want %q", cfg.app.Resolvers, want)
			}
		}},
		{"resolver no arg", block(minimal + "resolver\n"), true, nil},

		// ct_log
		{"ct_log", block(minimal + "ct_log https://ct.example.net/2026/\n"), false, func(t *testing.T, cfg *config) {
			if cfg.app.CTLog != "https://ct.example.net/2026/" {
				t.Errorf("ctLog = %q", cfg.app.CTLog)
			}
		}},
		{"ct_log no arg", block(minimal + "ct_log\n"), true, nil},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := caddy.NewTestController("dns", tc.input)
			cfg, err := parse(c)
			if tc.shouldErr {
				if err == nil {
					t.Fatalf("expected an error for %q, got config %+v", tc.input, cfg)
				}
				return
			}
			if err != nil {
				t.Fatalf("expected no error for %q, got %v", tc.input, err)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
}

func TestNewHandler(t *testing.T) {
	t.Parallel()
	c := caddy.NewTestController("dns", block(
		"nameserver ns1.example.org 192.0.2.53\n"+
			"nameserver ns2.example.net\n"+
			"nameserver ns3.example.org [::ffff:192.0.2.54]:53\n"+
			"nameserver ns4.example.org 2001:db8::53\n"))
	cfg, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(cfg)
	wantNS := []string{"ns1.example.org.", "ns2.example.net.", "ns3.example.org.", "ns4.example.org."}
	if !slices.Equal(nsNames(h), wantNS) {
		t.Errorf("ns = %q, want %q", nsNames(h), wantNS)
	}
	// A nameserver without an address has no static entry; a v4-mapped
	// address is served as the IPv4 address it is.
	want := map[string]string{
		"ns1.example.org.": "192.0.2.53",
		"ns3.example.org.": "192.0.2.54",
		"ns4.example.org.": "2001:db8::53",
	}
	if len(nsAddrs(h)) != len(want) {
		t.Errorf("static = %v, want %v", nsAddrs(h), want)
	}
	for name, addr := range want {
		if got := nsAddrs(h)[name].List(); len(got) != 1 || got[0].String() != addr {
			t.Errorf("static[%s] = %v, want [%s]", name, got, addr)
		}
	}
	if h.index == nil || h.index.Loaded() {
		t.Errorf("a new handler must have an empty, not yet loaded index")
	}
}

func TestDirectives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"before file", []string{"log", "rewrite", "file", "forward"}, []string{"log", "rewrite", "hostname", "file", "forward"}},
		{"file first", []string{"file", "forward"}, []string{"hostname", "file", "forward"}},
		{"no file", []string{"log", "forward"}, []string{"log", "forward", "hostname"}},
		{"empty", nil, []string{"hostname"}},
		{"already in place", []string{"log", "hostname", "file"}, []string{"log", "hostname", "file"}},
		{"present after file is moved", []string{"log", "file", "hostname", "forward"}, []string{"log", "hostname", "file", "forward"}},
		{"present twice", []string{"hostname", "log", "hostname", "file"}, []string{"log", "hostname", "file"}},
		{"present without file", []string{"hostname", "log", "forward"}, []string{"log", "forward", "hostname"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got := Directives(in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Directives(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("Directives changed its argument: %q, was %q", in, tc.in)
			}
		})
	}

	// CoreDNS's own list: hostname appears once, right before file.
	got := Directives(dnsserver.Directives)
	if n := len(got) - len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s == "hostname" })); n != 1 {
		t.Fatalf("hostname appears %d times in %q", n, got)
	}
	i := slices.Index(got, "hostname")
	if i+1 >= len(got) || got[i+1] != "file" {
		t.Errorf("hostname is not right before file in %q", got)
	}
	if slices.Contains(dnsserver.Directives, "hostname") {
		t.Errorf("Directives changed dnsserver.Directives")
	}
}

func nsNames(h *Handler) []string { ns, _ := h.answers.Nameservers(); return ns }

func nsAddrs(h *Handler) map[string]index.AddrList { _, a := h.answers.Nameservers(); return a }
