// Package records holds the DNS record types a caller publishes under a
// hostname (TXT, TLSA, CAA, MX, SRV, SSHFP, HTTPS, SVCB): the rules their API
// input must pass, the normalized form that is stored and answered as `data`,
// and the miekg/dns RR the server answers with.
//
// It knows nothing of HTTP handlers, storage, accounts or which hostname a
// record hangs under: callers pass the owner name in. Every broken rule is a
// apierror.BadRequest whose message names the field, so the handler can hand
// it on as is.
package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// TTL is the TTL of every published record; the spec makes it fixed.
const TTL = 300

// Types are the record types a caller may publish, in the spec's order.
var Types = []string{"TXT", "TLSA", "CAA", "MX", "SRV", "SSHFP", "HTTPS", "SVCB"}

// Input is a record request body as decoded from JSON (json tags = API field
// names). Pointers tell an omitted field from a zero one.
type Input struct {
	Type string  `json:"type"`
	Name *string `json:"name"` // label(s) under the hostname; nil or "" = the hostname itself

	Text json.RawMessage `json:"text"` // TXT: a string, or (create only) a list of strings

	Preference *int    `json:"preference"` // MX
	Exchange   *string `json:"exchange"`

	Priority *int    `json:"priority"` // SRV; Priority and Target also HTTPS, SVCB
	Weight   *int    `json:"weight"`
	Port     *int    `json:"port"`
	Target   *string `json:"target"`

	Algorithm   *int    `json:"algorithm"` // SSHFP
	FPType      *int    `json:"fptype"`
	Fingerprint *string `json:"fingerprint"`

	Usage        *int    `json:"usage"` // TLSA
	Selector     *int    `json:"selector"`
	MatchingType *int    `json:"matching_type"`
	Association  *string `json:"association"`

	Flags *int    `json:"flags"` // CAA
	Tag   *string `json:"tag"`
	Value *string `json:"value"`

	Params *Params `json:"params"` // HTTPS, SVCB
}

// Params are the RFC 9460 service parameters of an HTTPS or SVCB record.
type Params struct {
	ALPN          []string `json:"alpn,omitempty"`
	NoDefaultALPN bool     `json:"noDefaultAlpn,omitempty"`
	Port          *int     `json:"port,omitempty"`
	IPv4Hint      []string `json:"ipv4hint,omitempty"`
	IPv6Hint      []string `json:"ipv6hint,omitempty"`
	ECH           string   `json:"ech,omitempty"`
	Mandatory     []string `json:"mandatory,omitempty"`
}

// Record is a validated record: its type, its name relative to the hostname
// ("" = the hostname) and its data.
type Record struct {
	Type  string
	Label string
	Data  Data
}

// Data is the normalized type-specific content: what is stored (as JSON) and
// answered as `data`. Only the fields of the record's type are set; numbers
// are pointers so that a 0 (an MX preference, a CAA flag) is still written.
type Data struct {
	// Text is the TXT value as the client reads it: the concatenation of
	// its character-strings. Strings is set only when the caller sent a list
	// that is not what splitting Text into 255-byte strings gives back, so
	// DNS serves the strings exactly as sent and the common answer stays the
	// spec's {text}.
	Text    string   `json:"text,omitempty"`
	Strings []string `json:"strings,omitempty"`

	Preference *int   `json:"preference,omitempty"`
	Exchange   string `json:"exchange,omitempty"`

	Priority *int   `json:"priority,omitempty"`
	Weight   *int   `json:"weight,omitempty"`
	Port     *int   `json:"port,omitempty"`
	Target   string `json:"target,omitempty"`

	Algorithm   *int   `json:"algorithm,omitempty"`
	FPType      *int   `json:"fptype,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`

	Usage        *int   `json:"usage,omitempty"`
	Selector     *int   `json:"selector,omitempty"`
	MatchingType *int   `json:"matching_type,omitempty"`
	Association  string `json:"association,omitempty"`

	Flags *int   `json:"flags,omitempty"`
	Tag   string `json:"tag,omitempty"`
	Value string `json:"value,omitempty"`

	Params *Params `json:"params,omitempty"`
}

// kind is what one record type needs: the input fields that belong to it,
// the rules for them, and how its data becomes an RR.
type kind struct {
	rrtype uint16
	fields []string
	parse  func(in Input, create bool, label string) (Data, error)
	rr     func(d Data, h dns.RR_Header) (dns.RR, error)
}

var kinds = map[string]kind{
	"TXT":   {dns.TypeTXT, []string{"text"}, parseTXT, txtRR},
	"TLSA":  {dns.TypeTLSA, []string{"usage", "selector", "matching_type", "association"}, parseTLSA, tlsaRR},
	"CAA":   {dns.TypeCAA, []string{"flags", "tag", "value"}, parseCAA, caaRR},
	"MX":    {dns.TypeMX, []string{"preference", "exchange"}, parseMX, mxRR},
	"SRV":   {dns.TypeSRV, []string{"priority", "weight", "port", "target"}, parseSRV, srvRR},
	"SSHFP": {dns.TypeSSHFP, []string{"algorithm", "fptype", "fingerprint"}, parseSSHFP, sshfpRR},
	"HTTPS": {dns.TypeHTTPS, []string{"priority", "target", "params"}, parseSVCB, svcbRR},
	"SVCB":  {dns.TypeSVCB, []string{"priority", "target", "params"}, parseSVCB, svcbRR},
}

// Fields are the input fields of record type typ, as the API names them
// (nil for a type that is not one of Types). The API's schemas and the
// dashboard's forms are checked against them.
func Fields(typ string) []string { return slices.Clone(kinds[typ].fields) }

// Parse applies every rule to a request body. create is true for POST and
// false for PUT, where TXT takes one string of at most 255 bytes.
func Parse(in Input, create bool) (*Record, error) {
	typ, err := parseType(in.Type)
	if err != nil {
		return nil, err
	}
	k := kinds[typ]
	for _, f := range given(in) {
		if !slices.Contains(k.fields, f) {
			return nil, apierror.BadRequest("field %s does not belong to a %s record (%s takes %s)",
				f, typ, typ, strings.Join(k.fields, ", "))
		}
	}
	label, err := parseName(in.Name)
	if err != nil {
		return nil, err
	}
	d, err := k.parse(in, create, label)
	if err != nil {
		return nil, err
	}
	return &Record{Type: typ, Label: label, Data: d}, nil
}

func parseType(t string) (string, error) {
	if t == "" {
		return "", apierror.BadRequest("type is required: one of %s", strings.Join(Types, ", "))
	}
	typ := strings.ToUpper(t)
	if _, ok := kinds[typ]; ok {
		return typ, nil
	}
	if typ == "A" || typ == "AAAA" {
		return "", apierror.BadRequest("type %s is not accepted here: address records are set by PUT on the hostname", typ)
	}
	return "", apierror.BadRequest("type %q is not supported: use one of %s", t, strings.Join(Types, ", "))
}

// given lists the type-specific fields present in in, in a fixed order so
// that the first foreign one named is always the same.
func given(in Input) []string {
	var f []string
	add := func(set bool, name string) {
		if set {
			f = append(f, name)
		}
	}
	text := bytes.TrimSpace(in.Text)
	add(len(text) > 0 && string(text) != "null", "text")
	add(in.Preference != nil, "preference")
	add(in.Exchange != nil, "exchange")
	add(in.Priority != nil, "priority")
	add(in.Weight != nil, "weight")
	add(in.Port != nil, "port")
	add(in.Target != nil, "target")
	add(in.Algorithm != nil, "algorithm")
	add(in.FPType != nil, "fptype")
	add(in.Fingerprint != nil, "fingerprint")
	add(in.Usage != nil, "usage")
	add(in.Selector != nil, "selector")
	add(in.MatchingType != nil, "matching_type")
	add(in.Association != nil, "association")
	add(in.Flags != nil, "flags")
	add(in.Tag != nil, "tag")
	add(in.Value != nil, "value")
	add(in.Params != nil, "params")
	return f
}

// RR builds the record for owner, a fully qualified name with trailing dot.
func (r *Record) RR(owner string, ttl uint32) (dns.RR, error) {
	return r.Data.RR(r.Type, owner, ttl)
}

// RR builds the record of type typ for owner (fully qualified, trailing
// dot). It checks only what it needs to build a well-formed RR, so that
// stored data that went bad fails here instead of on the wire.
func (d Data) RR(typ, owner string, ttl uint32) (dns.RR, error) {
	k, ok := kinds[typ]
	if !ok {
		return nil, fmt.Errorf("records: unknown type %q", typ)
	}
	if !dns.IsFqdn(owner) {
		return nil, fmt.Errorf("records: owner %q is not fully qualified", owner)
	}
	return k.rr(d, dns.RR_Header{Name: owner, Rrtype: k.rrtype, Class: dns.ClassINET, Ttl: ttl})
}

// Decode turns stored JSON back into Data, refusing data that would not
// build an RR of type typ.
func Decode(typ string, data []byte) (Data, error) {
	var d Data
	if err := json.Unmarshal(data, &d); err != nil {
		return Data{}, fmt.Errorf("records: stored %s data: %w", typ, err)
	}
	if _, err := d.RR(typ, ".", TTL); err != nil {
		return Data{}, fmt.Errorf("records: stored %s data: %w", typ, err)
	}
	return d, nil
}

// Owner is the fully qualified owner name of a record with label under
// hostname (given without trailing dot).
func Owner(hostname, label string) string {
	if label == "" {
		return dns.Fqdn(hostname)
	}
	return dns.Fqdn(label + "." + hostname)
}
