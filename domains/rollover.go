package domains

import (
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// A key rollover replaces a signed domain's key without an unsigned
// moment, by double signatures (RFC 6781 4.1.1.2, which suits a combined
// key), in two steps the operator takes:
//   - start: a new key joins the DNSKEY set (and CDS, CDNSKEY), and every
//     RRset is signed by both keys; the API's ds lists both keys' DS.
//     A validator holding either key, by the parent's DS or its cache,
//     validates every answer.
//   - finish, once the parent publishes the new key's DS (sent with
//     ds_published true, which says so) and the DNSKEY set's TTL has
//     passed since start (every cache holds the new key): the old key
//     leaves the set and signs no more.
// cancel drops the new key instead. Each step is a change of the zone that
// secondaries receive by IXFR (every RRset's signatures, restated).

// rolloverWait is how long finish waits after start for caches: the
// DNSKEY set's TTL, which is also the zone's longest.
const rolloverWait = keyTTL * time.Second

// applyRollover takes the rollover step in.Rollover names, if any.
func (s *Service) applyRollover(d *storage.Domain, in Input) error {
	if in.Rollover == nil {
		return nil
	}
	if !d.DNSSEC {
		return apierror.Conflict("domain %s is not signed: there is no key to roll", d.Name)
	}
	now := s.now()
	ready := time.UnixMilli(d.RolloverAt).Add(rolloverWait)
	switch step := *in.Rollover; {
	case step == "start" && d.Rollover == "":
		key, sealed, err := s.makeKey(d)
		if err != nil {
			return err
		}
		d.NextDNSKEY, d.NextDNSSECKey = key, sealed
		d.Rollover, d.RolloverAt = storage.RolloverStarted, now.UnixMilli()
	case step == "cancel" && d.Rollover != "":
		endRollover(d)
	case step == "finish" && d.Rollover != "":
		if in.DSPublished == nil || !*in.DSPublished {
			return apierror.Conflict("finish the rollover of %s with ds_published true, once the parent publishes the new key's DS "+
				"(%s): without it, the zone is bogus once the old key goes", d.Name, DS(d)[len(DS(d))-1])
		}
		if now.Before(ready) {
			return apierror.Conflict("caches may not hold the new key of %s yet: finish from %s (the DNSKEY set's TTL after start)",
				d.Name, ready.UTC().Format(time.RFC3339))
		}
		d.DNSKEY, d.DNSSECKey = d.NextDNSKEY, d.NextDNSSECKey
		endRollover(d)
	case step == "start":
		return apierror.Conflict("a rollover of %s is under way: finish or cancel it first", d.Name)
	case step == "cancel" || step == "finish":
		return apierror.Conflict("domain %s has no rollover under way: start one first", d.Name)
	default:
		return apierror.BadRequest("rollover must be start, finish or cancel, got %q", step)
	}
	return nil
}

// endRollover forgets a rollover's key and stage.
func endRollover(d *storage.Domain) {
	d.NextDNSKEY, d.NextDNSSECKey, d.Rollover, d.RolloverAt = "", "", "", 0
}
