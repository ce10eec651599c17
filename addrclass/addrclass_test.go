package addrclass

import "testing"

func TestParseAndClass(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
		want    Class
		rtype   string
	}{
		{in: "1.2.3.4", want: Public, rtype: "A"},
		{in: "8.8.8.8", want: Public, rtype: "A"},
		{in: "10.1.2.3", want: Private, rtype: "A"},
		{in: "172.16.0.1", want: Private, rtype: "A"},
		{in: "172.32.0.1", want: Public, rtype: "A"},
		{in: "192.168.1.1", want: Private, rtype: "A"},
		{in: "127.0.0.1", want: Private, rtype: "A"},
		{in: "169.254.1.1", want: Private, rtype: "A"},
		{in: "100.64.0.1", want: Private, rtype: "A"},
		{in: "192.0.2.1", want: Private, rtype: "A"},
		{in: "224.0.0.1", want: Private, rtype: "A"},
		{in: "255.255.255.255", want: Private, rtype: "A"},
		{in: "0.0.0.0", want: Private, rtype: "A"},
		{in: "::ffff:1.2.3.4", want: Public, rtype: "A"},
		{in: "2606:4700::1111", want: Public, rtype: "AAAA"},
		{in: "2001:db8::1", want: Private, rtype: "AAAA"},
		{in: "fd00::1", want: Private, rtype: "AAAA"},
		{in: "fe80::1", want: Private, rtype: "AAAA"},
		{in: "::1", want: Private, rtype: "AAAA"},
		{in: "::", want: Private, rtype: "AAAA"},
		{in: "ff02::1", want: Private, rtype: "AAAA"},
		{in: "2002::1", want: Private, rtype: "AAAA"},
		{in: "fe80::1%eth0", wantErr: true},
		{in: "1.2.3", wantErr: true},
		{in: "", wantErr: true},
		{in: " 1.2.3.4", wantErr: true},
		{in: "example.org", wantErr: true},
		{in: "1.2.3.4/32", wantErr: true},
	}
	for _, tc := range tests {
		a, err := Parse(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("Parse(%q) err = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if got := Of(a); got != tc.want {
			t.Errorf("Of(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := RecordType(a); got != tc.rtype {
			t.Errorf("RecordType(%q) = %s, want %s", tc.in, got, tc.rtype)
		}
	}
}
