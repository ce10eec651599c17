package records

import (
	"errors"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// parseMX: exchange "." is the null MX of RFC 7505 ("this name takes no
// mail"), which is only meaningful with preference 0.
func parseMX(in Input, _ bool, _ string) (Data, error) {
	pref, err := number(in.Preference, "preference", 0, 0xffff)
	if err != nil {
		return Data{}, err
	}
	ex, err := parseHost("exchange", in.Exchange)
	if err != nil {
		return Data{}, err
	}
	if ex == "." && pref != 0 {
		return Data{}, apierror.BadRequest("preference must be 0 with exchange \".\" (null MX, RFC 7505), got %d", pref)
	}
	return Data{Preference: ptr(pref), Exchange: ex}, nil
}

func mxRR(d Data, h dns.RR_Header) (dns.RR, error) {
	pref, err := uint16Of(d.Preference, "preference")
	if err != nil {
		return nil, err
	}
	if d.Exchange == "" {
		return nil, errors.New("exchange missing")
	}
	return &dns.MX{Hdr: h, Preference: pref, Mx: fqdn(d.Exchange)}, nil
}

// parseSRV: target "." says the service is decidedly not offered (RFC 2782).
func parseSRV(in Input, _ bool, _ string) (Data, error) {
	var v [3]int
	for i, f := range []struct {
		p    *int
		name string
	}{{in.Priority, "priority"}, {in.Weight, "weight"}, {in.Port, "port"}} {
		n, err := number(f.p, f.name, 0, 0xffff)
		if err != nil {
			return Data{}, err
		}
		v[i] = n
	}
	target, err := parseHost("target", in.Target)
	if err != nil {
		return Data{}, err
	}
	return Data{Priority: ptr(v[0]), Weight: ptr(v[1]), Port: ptr(v[2]), Target: target}, nil
}

func srvRR(d Data, h dns.RR_Header) (dns.RR, error) {
	prio, err := uint16Of(d.Priority, "priority")
	if err != nil {
		return nil, err
	}
	weight, err := uint16Of(d.Weight, "weight")
	if err != nil {
		return nil, err
	}
	port, err := uint16Of(d.Port, "port")
	if err != nil {
		return nil, err
	}
	if d.Target == "" {
		return nil, errors.New("target missing")
	}
	return &dns.SRV{Hdr: h, Priority: prio, Weight: weight, Port: port, Target: fqdn(d.Target)}, nil
}
