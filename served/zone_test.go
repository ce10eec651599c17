package served

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

func TestHostname(t *testing.T) {
	const hour = int64(3600_000)
	caa, _ := dns.NewRR("web.example.org. 300 IN CAA 0 issue \"ca.example\"")
	policy, _ := dns.NewRR("example.org. 300 IN CAA 0 issue \"letsencrypt.org\"")
	txt := storage.Record{ID: "r1", Name: "a.b.web.example.org", Type: "TXT", Data: `{"text":"hello"}`}
	ownCAA := storage.Record{ID: "r2", Name: "web.example.org", Type: "CAA", Data: `{"flags":0,"tag":"issue","value":"ca.example"}`}
	chals := []storage.Challenge{{Value: "new", CreatedAt: 3 * hour}, {Value: "mid", CreatedAt: 2 * hour}, {Value: "old", CreatedAt: hour}}
	cases := []struct {
		name   string
		h      storage.Hostname
		recs   []storage.Record
		chals  []storage.Challenge
		served bool
		below  []string
		caa    int // CAA records served at the hostname's name with the policy
	}{
		{"live, v4", storage.Hostname{Name: "web.example.org", Status: storage.StatusLive, IP: "192.0.2.1"}, nil, nil, true, nil, 1},
		{"released", storage.Hostname{Name: "web.example.org", Status: storage.StatusReleased, IP: "192.0.2.1"}, nil, nil, false, nil, 0},
		{"no address", storage.Hostname{Name: "web.example.org", Status: storage.StatusPending}, nil, nil, false, nil, 0},
		{"records below, an empty name between", storage.Hostname{Name: "web.example.org", Status: storage.StatusLive, Addrs: "192.0.2.1,2001:db8::1"},
			[]storage.Record{txt}, nil, true, []string{"a.b.web.example.org.", "b.web.example.org."}, 1},
		{"its own CAA hides the policy", storage.Hostname{Name: "web.example.org", Status: storage.StatusLive, IP: "192.0.2.1"},
			[]storage.Record{ownCAA}, nil, true, nil, 1},
		{"DNS-01 values", storage.Hostname{Name: "web.example.org", Status: storage.StatusLive, IP: "192.0.2.1"},
			nil, chals, true, []string{"_acme-challenge.web.example.org."}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			own, below, ok := Hostname(&tc.h, tc.recs, tc.chals, func(r *storage.Record, err error) { t.Errorf("record %s: %v", r.ID, err) })
			if ok != tc.served {
				t.Fatalf("served %v, want %v", ok, tc.served)
			}
			if !ok {
				return
			}
			var names []string
			for n := range below {
				names = append(names, n)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.below) {
				t.Errorf("names below %v, want %v", names, tc.below)
			}
			sets := own.Served("web.example.org.", []dns.RR{policy}, 60)
			if got := len(sets[dns.TypeCAA]); got != tc.caa {
				t.Errorf("%d CAA at the hostname, want %d", got, tc.caa)
			}
			if len(tc.recs) > 0 && tc.recs[0].Type == "CAA" && sets[dns.TypeCAA][0].String() != caa.String() {
				t.Errorf("the hostname's CAA %v, want its own %v", sets[dns.TypeCAA], caa)
			}
			if c := below["_acme-challenge.web.example.org."]; c != nil {
				if n := len(c.RRsets[dns.TypeTXT]); n != 2 || c.Expires != 3*hour+24*hour {
					t.Errorf("DNS-01: %d values until %d, want the 2 newest until a day after the newest", n, c.Expires)
				}
			}
			if n := below["b.web.example.org."]; n != nil && len(n.Served("b.web.example.org.", []dns.RR{policy}, 60)) != 0 {
				t.Errorf("an empty name between serves %v", n.RRsets)
			}
		})
	}
}

func TestApexAndNameservers(t *testing.T) {
	ns := Nameservers{Names: []string{"ns1.example.org.", "ns2.example.net."},
		Addrs: map[string][]netip.Addr{"ns1.example.org.": {netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("2001:db8::53")}}}
	apex := Apex("example.org.", ns, DefaultSOA, 42, nil)
	soa := apex[dns.TypeSOA][0].(*dns.SOA)
	if soa.Ns != "ns1.example.org." || soa.Mbox != "hostmaster.example.org." || soa.Serial != 42 || len(apex[dns.TypeNS]) != 2 || apex[dns.TypeCAA] != nil {
		t.Errorf("apex %v", apex)
	}
	if at := ns.At("ns1.example.org."); len(at[dns.TypeA]) != 1 || len(at[dns.TypeAAAA]) != 1 {
		t.Errorf("the nameserver's name serves %v", at)
	}
	if ns.At("ns2.example.net.") != nil || !ns.Above("example.org.") || ns.Above("ns1.example.org.") {
		t.Errorf("names without an address serve nothing; names above one exist")
	}
}
