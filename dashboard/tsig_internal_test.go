package dashboard

import "testing"

// The snippets name the DNS server a client can reach, or a placeholder.
func TestDNSServer(t *testing.T) {
	for _, tc := range []struct{ addr, host, port string }{
		{"", "NAMESERVER", "53"},
		{":53", "NAMESERVER", "53"},
		{"0.0.0.0:5353", "NAMESERVER", "5353"},
		{"[::]:53", "NAMESERVER", "53"},
		{"192.0.2.1:5353", "192.0.2.1", "5353"},
		{"[2001:db8::1]:53", "2001:db8::1", "53"},
		{"2001:db8::1", "2001:db8::1", "53"},
		{"ns1.example.net", "ns1.example.net", "53"},
		{"ns1.example.net:1053", "ns1.example.net", "1053"},
	} {
		h := &Handler{cfg: Config{DNSAddr: tc.addr}}
		if host, port := h.dnsServer(); host != tc.host || port != tc.port {
			t.Errorf("%q: %s %s, want %s %s", tc.addr, host, port, tc.host, tc.port)
		}
	}
}
