package hostnames

import (
	"net/netip"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

func TestRepoint(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(5000)
	v4, v6 := netip.MustParseAddr("198.41.0.4"), netip.MustParseAddr("2001:500:2d::d")
	live := storage.Hostname{IP: "198.41.0.4", Addrs: "198.41.0.4", Status: storage.StatusLive, UpdatedAt: 1}
	for _, tc := range []struct {
		name      string
		h         storage.Hostname
		addrs     []netip.Addr
		target    string
		refreshAt int64
		changed   bool
		want      storage.Hostname
	}{
		{"the same address", live, []netip.Addr{v4}, "", 0, false, live},
		{"a second family", live, []netip.Addr{v4, v6}, "", 0, true,
			storage.Hostname{IP: "198.41.0.4", Addrs: "198.41.0.4,2001:500:2d::d", Status: storage.StatusPending, UpdatedAt: 5000}},
		{"the same address, now from a target", live, []netip.Addr{v4}, "app.example.net", 9000, true,
			storage.Hostname{IP: "198.41.0.4", Addrs: "198.41.0.4", Target: "app.example.net", RefreshAt: 9000, Status: storage.StatusPending, UpdatedAt: 5000}},
		{"off a target", storage.Hostname{IP: "198.41.0.4", Addrs: "198.41.0.4", Target: "app.example.net", RefreshAt: 9000, Status: storage.StatusLive},
			[]netip.Addr{v6}, "", 0, true,
			storage.Hostname{IP: "2001:500:2d::d", Addrs: "2001:500:2d::d", Status: storage.StatusPending, UpdatedAt: 5000}},
	} {
		h := tc.h
		if got := repoint(&h, tc.addrs, tc.target, tc.refreshAt, now); got != tc.changed || h != tc.want {
			t.Errorf("%s: repoint = %v, %+v; want %v, %+v", tc.name, got, h, tc.changed, tc.want)
		}
	}
}
