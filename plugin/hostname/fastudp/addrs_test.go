package fastudp

import (
	"net"
	"slices"
	"testing"
)

func TestListenAddrs(t *testing.T) {
	t.Parallel()
	ifaces := func() ([]net.Addr, error) {
		var as []net.Addr
		for _, c := range []string{"127.0.0.1/8", "10.0.2.15/24", "::1/128", "fe80::1/64", "2001:db8::5/64"} {
			ip, n, _ := net.ParseCIDR(c)
			n.IP = ip
			as = append(as, n)
		}
		return as, nil
	}
	for _, tc := range []struct {
		addr  string
		want  []string
		alone bool
		err   bool
	}{
		{addr: "127.0.0.1:53", want: []string{"127.0.0.1:53"}},
		{addr: "[2001:db8::5]:5353", want: []string{"[2001:db8::5]:5353"}},
		{addr: ":53", want: []string{"127.0.0.1:53", "10.0.2.15:53", "[::1]:53", "[2001:db8::5]:53"}, alone: true},
		{addr: "[::]:53", want: []string{"127.0.0.1:53", "10.0.2.15:53", "[::1]:53", "[2001:db8::5]:53"}, alone: true},
		{addr: "0.0.0.0:53", want: []string{"127.0.0.1:53", "10.0.2.15:53"}, alone: true},
		{addr: "localhost:53", err: true},
		{addr: "53", err: true},
	} {
		got, alone, err := listenAddrs(tc.addr, ifaces)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) || alone != tc.alone {
			t.Errorf("%s: %v alone %t (%v); want %v alone %t", tc.addr, got, alone, err, tc.want, tc.alone)
		}
	}
}
