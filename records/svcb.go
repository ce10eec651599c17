package records

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// mandatoryKeys are the keys a caller may list in mandatory. mandatory
// itself may not be (RFC 9460 §8), and port and no-default-alpn are
// automatically mandatory, so they are left out as the RFC advises.
var mandatoryKeys = map[string]dns.SVCBKey{
	"alpn":     dns.SVCB_ALPN,
	"port":     dns.SVCB_PORT,
	"ipv4hint": dns.SVCB_IPV4HINT,
	"ech":      dns.SVCB_ECHCONFIG,
	"ipv6hint": dns.SVCB_IPV6HINT,
}

// parseSVCB serves HTTPS and SVCB, which share their RDATA (RFC 9460).
// Priority 0 is alias mode: the record only points elsewhere, and
// parameters there would be ignored by clients.
func parseSVCB(in Input, _ bool, _ string) (Data, error) {
	prio, err := number(in.Priority, "priority", 0, 0xffff)
	if err != nil {
		return Data{}, err
	}
	target, err := parseHost("target", in.Target)
	if err != nil {
		return Data{}, err
	}
	p, err := parseParams(in.Params)
	if err != nil {
		return Data{}, err
	}
	if prio == 0 && p != nil {
		return Data{}, apierror.BadRequest("params must be absent when priority is 0 (alias mode)")
	}
	return Data{Priority: ptr(prio), Target: target, Params: p}, nil
}

// parseParams returns a normalized copy of in, or nil when no parameter is set.
func parseParams(in *Params) (*Params, error) {
	if in == nil {
		return nil, nil
	}
	p := &Params{NoDefaultALPN: in.NoDefaultALPN}
	if in.ALPN != nil {
		if len(in.ALPN) == 0 {
			return nil, apierror.BadRequest("params.alpn must not be an empty list")
		}
		for i, id := range in.ALPN {
			if err := alpnID(id); err != nil {
				return nil, apierror.BadRequest("params.alpn[%d] %v", i, err)
			}
		}
		p.ALPN = slices.Clone(in.ALPN)
	}
	if p.NoDefaultALPN && p.ALPN == nil {
		return nil, apierror.BadRequest("params.noDefaultAlpn requires params.alpn: a client must be offered some protocol")
	}
	if in.Port != nil {
		n, err := number(in.Port, "params.port", 0, 0xffff)
		if err != nil {
			return nil, err
		}
		p.Port = ptr(n)
	}
	var err error
	if p.IPv4Hint, err = hints(in.IPv4Hint, "params.ipv4hint", 4); err != nil {
		return nil, err
	}
	if p.IPv6Hint, err = hints(in.IPv6Hint, "params.ipv6hint", 6); err != nil {
		return nil, err
	}
	if in.ECH != "" {
		b, err := base64.StdEncoding.Strict().DecodeString(in.ECH)
		if err != nil || len(b) == 0 {
			return nil, apierror.BadRequest("params.ech must be an ECHConfigList in standard base64")
		}
		p.ECH = in.ECH
	}
	if p.Mandatory, err = mandatory(in.Mandatory, p); err != nil {
		return nil, err
	}
	if p.ALPN == nil && p.Port == nil && p.IPv4Hint == nil && p.IPv6Hint == nil && p.ECH == "" {
		return nil, nil
	}
	return p, nil
}

// alpnID refuses what cannot be written in a zone file without double
// escaping: commas separate ids there, and registered ids are printable
// ASCII anyway.
func alpnID(id string) error {
	switch {
	case id == "":
		return errors.New("must not be empty")
	case len(id) > 255:
		return fmt.Errorf("must be at most 255 bytes, got %d", len(id))
	case strings.Contains(id, ","):
		return errors.New("must not hold a comma")
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' || id[i] == '\\' {
			return fmt.Errorf("must be printable ASCII without spaces or backslashes, found %q", rune(id[i]))
		}
	}
	return nil
}

// hints checks a list of addresses of one family and returns them in
// canonical text form.
func hints(in []string, field string, family int) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, apierror.BadRequest("%s must not be an empty list", field)
	}
	out := make([]string, len(in))
	for i, s := range in {
		a, err := netip.ParseAddr(s)
		ok := err == nil && a.Zone() == "" && (family == 4 && a.Is4() || family == 6 && a.Is6() && !a.Is4In6())
		if !ok {
			return nil, apierror.BadRequest("%s[%d] must be an IPv%d address, got %q", field, i, family, s)
		}
		out[i] = a.String()
	}
	return out, nil
}

// mandatory checks the keys a client must understand to use the record:
// each must be set, none twice. They are kept in key order, as on the wire.
func mandatory(in []string, p *Params) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, apierror.BadRequest("params.mandatory must not be an empty list")
	}
	set := map[string]bool{
		"alpn": p.ALPN != nil, "port": p.Port != nil, "ipv4hint": p.IPv4Hint != nil,
		"ipv6hint": p.IPv6Hint != nil, "ech": p.ECH != "",
	}
	out := slices.Clone(in)
	for i, k := range out {
		if _, ok := mandatoryKeys[k]; !ok {
			return nil, apierror.BadRequest("params.mandatory[%d] must be one of alpn, port, ipv4hint, ipv6hint, ech, got %q", i, k)
		}
		if !set[k] {
			return nil, apierror.BadRequest("params.mandatory lists %s, which params does not set", k)
		}
		if slices.Contains(out[:i], k) {
			return nil, apierror.BadRequest("params.mandatory lists %s twice", k)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return int(mandatoryKeys[a]) - int(mandatoryKeys[b]) })
	return out, nil
}

// svcbRR writes the parameters in ascending key order, as RFC 9460 requires
// on the wire; miekg/dns sorts when packing but prints in slice order.
func svcbRR(d Data, h dns.RR_Header) (dns.RR, error) {
	prio, err := uint16Of(d.Priority, "priority")
	if err != nil {
		return nil, err
	}
	if d.Target == "" {
		return nil, errors.New("target missing")
	}
	s := dns.SVCB{Hdr: h, Priority: prio, Target: fqdn(d.Target)}
	if p := d.Params; p != nil {
		if s.Value, err = svcParams(p); err != nil {
			return nil, err
		}
	}
	if h.Rrtype == dns.TypeHTTPS {
		return &dns.HTTPS{SVCB: s}, nil
	}
	return &s, nil
}

func svcParams(p *Params) ([]dns.SVCBKeyValue, error) {
	var kv []dns.SVCBKeyValue
	if len(p.Mandatory) > 0 {
		m := &dns.SVCBMandatory{}
		for _, k := range p.Mandatory {
			code, ok := mandatoryKeys[k]
			if !ok {
				return nil, fmt.Errorf("mandatory key %q unknown", k)
			}
			m.Code = append(m.Code, code)
		}
		kv = append(kv, m)
	}
	if len(p.ALPN) > 0 {
		kv = append(kv, &dns.SVCBAlpn{Alpn: slices.Clone(p.ALPN)})
	}
	if p.NoDefaultALPN {
		kv = append(kv, &dns.SVCBNoDefaultAlpn{})
	}
	if p.Port != nil {
		port, err := uint16Of(p.Port, "port")
		if err != nil {
			return nil, err
		}
		kv = append(kv, &dns.SVCBPort{Port: port})
	}
	if len(p.IPv4Hint) > 0 {
		ips, err := ipList(p.IPv4Hint)
		if err != nil {
			return nil, err
		}
		kv = append(kv, &dns.SVCBIPv4Hint{Hint: ips})
	}
	if p.ECH != "" {
		b, err := base64.StdEncoding.DecodeString(p.ECH)
		if err != nil {
			return nil, fmt.Errorf("ech: %w", err)
		}
		kv = append(kv, &dns.SVCBECHConfig{ECH: b})
	}
	if len(p.IPv6Hint) > 0 {
		ips, err := ipList(p.IPv6Hint)
		if err != nil {
			return nil, err
		}
		kv = append(kv, &dns.SVCBIPv6Hint{Hint: ips})
	}
	return kv, nil
}

func ipList(ss []string) ([]net.IP, error) {
	ips := make([]net.IP, len(ss))
	for i, s := range ss {
		if ips[i] = net.ParseIP(s); ips[i] == nil {
			return nil, fmt.Errorf("hint %q is not an IP address", s)
		}
	}
	return ips, nil
}
