package dnsupdate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/hostmint/hostmint/records"
	"github.com/miekg/dns"
)

// [P2] The eight record types a caller publishes under a hostname are, by
// UPDATE, the same records the API's record endpoints write: an RR is read
// into the API's record input (inputOf) and the record rules decide.

// recordType is the record type name of t when callers publish it.
func recordType(t uint16) (string, bool) {
	name := dns.TypeToString[t]
	for _, typ := range records.Types {
		if typ == name {
			return name, true
		}
	}
	return "", false
}

// inputOf reads rr as the API's record input, at name (fully qualified:
// the record rule reads it against its hostname's).
func inputOf(rr dns.RR, name string) (records.Input, error) {
	typ, _ := recordType(rr.Header().Rrtype)
	in := records.Input{Type: typ, Name: &name}
	num := func(v int) *int { return &v }
	str := func(v string) *string { return &v }
	switch v := rr.(type) {
	case *dns.TXT:
		b, _ := json.Marshal(v.Txt)
		in.Text = b
	case *dns.MX:
		in.Preference, in.Exchange = num(int(v.Preference)), str(v.Mx)
	case *dns.SRV:
		in.Priority, in.Weight, in.Port, in.Target = num(int(v.Priority)), num(int(v.Weight)), num(int(v.Port)), str(v.Target)
	case *dns.SSHFP:
		in.Algorithm, in.FPType, in.Fingerprint = num(int(v.Algorithm)), num(int(v.Type)), str(v.FingerPrint)
	case *dns.TLSA:
		in.Usage, in.Selector, in.MatchingType, in.Association = num(int(v.Usage)), num(int(v.Selector)), num(int(v.MatchingType)), str(v.Certificate)
	case *dns.CAA:
		in.Flags, in.Tag, in.Value = num(int(v.Flag)), str(v.Tag), str(v.Value)
	case *dns.HTTPS:
		return svcbInput(in, &v.SVCB)
	case *dns.SVCB:
		return svcbInput(in, v)
	default:
		return in, fmt.Errorf("%s records are not published here", dns.TypeToString[rr.Header().Rrtype])
	}
	return in, nil
}

func svcbInput(in records.Input, v *dns.SVCB) (records.Input, error) {
	prio, target := int(v.Priority), v.Target
	in.Priority, in.Target = &prio, &target
	if len(v.Value) == 0 {
		return in, nil
	}
	p := &records.Params{}
	for _, kv := range v.Value {
		switch kv := kv.(type) {
		case *dns.SVCBAlpn:
			p.ALPN = kv.Alpn
		case *dns.SVCBNoDefaultAlpn:
			p.NoDefaultALPN = true
		case *dns.SVCBPort:
			port := int(kv.Port)
			p.Port = &port
		case *dns.SVCBIPv4Hint:
			for _, ip := range kv.Hint {
				p.IPv4Hint = append(p.IPv4Hint, ip.String())
			}
		case *dns.SVCBIPv6Hint:
			for _, ip := range kv.Hint {
				p.IPv6Hint = append(p.IPv6Hint, ip.String())
			}
		case *dns.SVCBECHConfig:
			p.ECH = base64.StdEncoding.EncodeToString(kv.ECH)
		case *dns.SVCBMandatory:
			for _, k := range kv.Code {
				p.Mandatory = append(p.Mandatory, k.String())
			}
		default:
			return in, fmt.Errorf("the service parameter %s is not published here (alpn, no-default-alpn, port, ipv4hint, ipv6hint, ech, mandatory are)", kv.Key())
		}
	}
	in.Params = p
	return in, nil
}
