package served

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/records"
	"github.com/miekg/dns"
)

// TTLNS is the TTL of the NS records and of the nameservers' addresses.
const TTLNS = 3600

// SOA is what every served zone's SOA says besides its names and serial
// (the Corefile's soa option).
type SOA struct {
	Mbox                            string // the contact mailbox as a name (FQDN); "": hostmaster.<zone>
	Refresh, Retry, Expire, Minimum uint32 // seconds
}

// DefaultSOA: secondaries check hourly (NOTIFY tells them sooner), retry
// every 10 minutes, keep serving two weeks without us; MINIMUM, the
// negative caching time (RFC 2308), is short because a name made after a
// miss must resolve within a minute.
var DefaultSOA = SOA{Refresh: 3600, Retry: 600, Expire: 1209600, Minimum: 60}

// RR is zone's SOA (zone a lowercase FQDN) naming mname as its primary,
// with serial and ttl.
func (v SOA) RR(zone, mname string, serial, ttl uint32) *dns.SOA {
	mbox := v.Mbox
	if mbox == "" {
		mbox = "hostmaster." + zone
	}
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:      mname,
		Mbox:    mbox,
		Serial:  serial,
		Refresh: v.Refresh, Retry: v.Retry, Expire: v.Expire, Minttl: v.Minimum,
	}
}

// Nameservers are the names every served zone's NS set holds, and the
// addresses of those given one (served at their names when inside a
// served zone, and as glue).
type Nameservers struct {
	Names []string                // FQDN, lowercase, in the Corefile's order
	Addrs map[string][]netip.Addr // name -> its addresses
}

// NS is the NS set at owner.
func (ns Nameservers) NS(owner string) []dns.RR {
	rrs := make([]dns.RR, len(ns.Names))
	for i, n := range ns.Names {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: TTLNS}, Ns: n}
	}
	return rrs
}

// At is what a nameserver's name serves (its addresses), by type; nil
// when name is no nameserver's with an address.
func (ns Nameservers) At(name string) map[uint16][]dns.RR {
	addrs := ns.Addrs[name]
	if len(addrs) == 0 {
		return nil
	}
	out := map[uint16][]dns.RR{}
	for _, a := range addrs {
		out[AddrType(a)] = append(out[AddrType(a)], AddrRR(name, a, TTLNS))
	}
	return out
}

// Above reports whether name is an empty non-terminal above a nameserver's
// name with an address (ns1.sub.example.org makes sub.example.org exist).
func (ns Nameservers) Above(name string) bool {
	for n := range ns.Addrs {
		if len(n) > len(name) && n[len(n)-len(name)-1] == '.' && strings.HasSuffix(n, name) {
			return true
		}
	}
	return false
}

// Apex is what a zone's apex serves by type: its SOA (with serial), the
// NS set, and the domain's CAA policy. DNSSEC's records (DNSKEY, CDS,
// CDNSKEY) are the signer's, not the projection's.
func Apex(zone string, ns Nameservers, soa SOA, serial uint32, policy []dns.RR) map[uint16][]dns.RR {
	mname := "."
	if len(ns.Names) > 0 {
		mname = ns.Names[0]
	}
	out := map[uint16][]dns.RR{
		dns.TypeSOA: {soa.RR(zone, mname, serial, soa.Minimum)},
		dns.TypeNS:  ns.NS(zone),
	}
	if len(policy) > 0 {
		out[dns.TypeCAA] = Rewrite(policy, zone, records.TTL)
	}
	return out
}

// ParseSOA reads `soa RNAME [REFRESH RETRY EXPIRE MINIMUM]`; times are
// seconds or Go durations (1h, 10m).
func ParseSOA(a []string) (SOA, error) {
	v := DefaultSOA
	if len(a) != 1 && len(a) != 5 {
		return v, fmt.Errorf("soa takes RNAME, or RNAME REFRESH RETRY EXPIRE MINIMUM")
	}
	mbox, err := mailbox(a[0])
	if err != nil {
		return v, err
	}
	v.Mbox = mbox
	if len(a) == 1 {
		return v, nil
	}
	for i, f := range []*uint32{&v.Refresh, &v.Retry, &v.Expire, &v.Minimum} {
		n, err := seconds(a[1+i])
		if err != nil {
			return v, fmt.Errorf("soa %s: %w", []string{"REFRESH", "RETRY", "EXPIRE", "MINIMUM"}[i], err)
		}
		*f = n
	}
	switch {
	case v.Refresh == 0 || v.Retry == 0:
		return v, fmt.Errorf("soa REFRESH and RETRY must be more than 0 seconds")
	case uint64(v.Expire) < uint64(v.Refresh)+uint64(v.Retry):
		return v, fmt.Errorf("soa EXPIRE (%d s) must be at least REFRESH + RETRY (%d s): secondaries would drop the zone before they retried", v.Expire, v.Refresh+v.Retry)
	case v.Minimum > 86400:
		return v, fmt.Errorf("soa MINIMUM (%d s) is the negative caching time: at most a day (86400)", v.Minimum)
	}
	return v, nil
}

// mailbox is RNAME as a domain name: hostmaster.example.net as it is, or
// an address (john.doe@example.net) with its local part's dots escaped.
func mailbox(s string) (string, error) {
	if local, domain, ok := strings.Cut(s, "@"); ok {
		s = strings.ReplaceAll(local, ".", "\\.") + "." + domain
	}
	name := dns.Fqdn(strings.ToLower(s))
	if _, ok := dns.IsDomainName(name); !ok || dns.CountLabel(name) < 2 {
		return "", fmt.Errorf("soa RNAME %q is not a mailbox (hostmaster.example.net or hostmaster@example.net)", s)
	}
	return name, nil
}

func seconds(s string) (uint32, error) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 1<<31*time.Second {
		return 0, fmt.Errorf("%q is not seconds or a duration (3600, 1h)", s)
	}
	return uint32(d / time.Second), nil
}
