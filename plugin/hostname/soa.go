package hostname

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// soaValues are what every served zone's SOA says besides its names and
// serial (the Corefile's soa option).
type soaValues struct {
	mbox                            string // the contact mailbox as a name (FQDN); "": hostmaster.<zone>
	refresh, retry, expire, minimum uint32 // seconds
}

// defaultSOA: secondaries check hourly (NOTIFY tells them sooner), retry
// every 10 minutes, keep serving two weeks without us; MINIMUM, the
// negative caching time (RFC 2308), is short because a name made after a
// miss must resolve within a minute.
var defaultSOA = soaValues{refresh: 3600, retry: 600, expire: 1209600, minimum: 60}

// parseSOA reads `soa RNAME [REFRESH RETRY EXPIRE MINIMUM]`; times are
// seconds or Go durations (1h, 10m).
func parseSOA(a []string) (soaValues, error) {
	v := defaultSOA
	if len(a) != 1 && len(a) != 5 {
		return v, fmt.Errorf("soa takes RNAME, or RNAME REFRESH RETRY EXPIRE MINIMUM")
	}
	mbox, err := mailbox(a[0])
	if err != nil {
		return v, err
	}
	v.mbox = mbox
	if len(a) == 1 {
		return v, nil
	}
	for i, f := range []*uint32{&v.refresh, &v.retry, &v.expire, &v.minimum} {
		n, err := seconds(a[1+i])
		if err != nil {
			return v, fmt.Errorf("soa %s: %w", []string{"REFRESH", "RETRY", "EXPIRE", "MINIMUM"}[i], err)
		}
		*f = n
	}
	switch {
	case v.refresh == 0 || v.retry == 0:
		return v, fmt.Errorf("soa REFRESH and RETRY must be more than 0 seconds")
	case uint64(v.expire) < uint64(v.refresh)+uint64(v.retry):
		return v, fmt.Errorf("soa EXPIRE (%d s) must be at least REFRESH + RETRY (%d s): secondaries would drop the zone before they retried", v.expire, v.refresh+v.retry)
	case v.minimum > 86400:
		return v, fmt.Errorf("soa MINIMUM (%d s) is the negative caching time: at most a day (86400)", v.minimum)
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

// soa is the zone's SOA with the given TTL. The serial is the newest change
// applied, so every node that has applied the same changes agrees on it.
func (h *Handler) soa(z *zone, ttl uint32) dns.RR {
	v := h.cfg.soa
	mbox := v.mbox
	if mbox == "" {
		mbox = "hostmaster." + z.name
	}
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: z.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:      h.ns[0],
		Mbox:    mbox,
		Serial:  h.index.serial.Load(),
		Refresh: v.refresh, Retry: v.retry, Expire: v.expire, Minttl: v.minimum,
	}
}
