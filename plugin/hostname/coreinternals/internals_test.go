package coreinternals

import (
	"context"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	_ "github.com/coredns/coredns/plugin/tsig"
	"github.com/miekg/dns"
)

// Each of CoreDNS's internals the plugin reads (internals.go) is read from
// the real thing: a CoreDNS upgrade that moves one fails here, not as a
// fast_udp that quietly stays off.

func TestServerBlocksAndOpcodes(t *testing.T) {
	cfg := &dnsserver.Config{Zone: "example.org.", ListenHosts: []string{"127.0.0.1"}, Port: "0"}
	cfg.AllowOpcode(dns.OpcodeUpdate)
	srv, err := dnsserver.NewServer("dns://127.0.0.1:0", []*dnsserver.Config{cfg})
	if err != nil {
		t.Fatal(err)
	}
	blocks, ok := ServerBlocks(srv)
	if !ok || len(blocks) != 1 || blocks["example.org."] != cfg {
		t.Errorf("the server's blocks: %v (%v), want example.org. -> its config", blocks, ok)
	}
	ops, ok := ServerOpcodes(srv)
	if !ok || !ops[dns.OpcodeUpdate] {
		t.Errorf("the server's opcodes: %v (%v), want UPDATE among them", ops, ok)
	}
}

func TestTSIGRequires(t *testing.T) {
	setup, err := caddy.DirectiveAction("dns", "tsig")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		block string
		want  bool
	}{
		{"tsig {\n secret xfr.key. c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n}", false},
		{"tsig {\n secret xfr.key. c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n require AXFR IXFR\n}", true},
		{"tsig {\n secret xfr.key. c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n require all\n}", true},
	} {
		c := caddy.NewTestController("dns", tc.block)
		if err := setup(c); err != nil {
			t.Fatal(err)
		}
		conf := dnsserver.GetConfig(c)
		ph := conf.Plugin[len(conf.Plugin)-1](nil)
		if got := TSIGRequires(ph); got != tc.want {
			t.Errorf("%q: requires %v, want %v", tc.block, got, tc.want)
		}
	}
}

func TestUnwrapPluginWriter(t *testing.T) {
	rec := &test.ResponseWriter{}
	var got dns.ResponseWriter
	next := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
		got = w
		return 0, nil
	})
	plugin.NextOrFailure("x", next, context.Background(), rec, new(dns.Msg))
	if inner, ok := UnwrapPluginWriter(got); !ok || inner != dns.ResponseWriter(rec) {
		t.Errorf("the writer inside CoreDNS's per-plugin wrapper %T: %v, %v", got, inner, ok)
	}
	if _, ok := UnwrapPluginWriter(rec); ok {
		t.Errorf("a writer that is no wrapper was unwrapped")
	}
}
