package hostnames

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/diagnose"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
)

// DefaultDiagnoses is the per-team diagnose rate when the Corefile sets none:
// each report sends dozens of queries to nameservers, resolvers and a log.
const DefaultDiagnoses = 10

// Diagnose makes the authoritative report of a hostname ([P2]).
func (s *Diagnoser) Diagnose(ctx context.Context, p *access.Principal, id string) (*diagnose.Report, error) {
	q := s.store.Reader()
	h, err := s.owned(ctx, q, p, id, access.HostnamesRead)
	if err != nil {
		return nil, err
	}
	limit := ratelimit.Limit{Kind: "diagnose", Max: s.perMinute, Window: time.Minute, What: "diagnose reports"}
	if limit.Max <= 0 {
		limit.Max = DefaultDiagnoses
	}
	// The token pays for a report; it is not a write to audit.
	if _, err := s.store.Write(storage.WithoutAudit(ctx), func(ctx context.Context, tx *storage.Tx) error {
		if _, err := tx.LockAccount(ctx, p.AccountID); err != nil {
			return err
		}
		return ratelimit.Take(ctx, tx, p.AccountID, limit, s.now())
	}); err != nil {
		return nil, err
	}
	d, err := q.Domain(ctx, h.DomainID)
	if err != nil {
		return nil, err
	}
	sub := diagnose.Subject{
		Name: h.Name, Status: s.Status(h, s.now()), Addrs: h.ServedAddrs(), Domain: d.Name,
		Signed: d.DNSSEC, DNSKEY: d.DNSKEY, CAA: domains.CAA(d),
	}
	if h.Certificate == CertManaged || h.Certificate == CertCSR {
		sub.CA, sub.ServiceCert = h.CA, true
	}
	rs, err := q.Records(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	var own []string
	for _, r := range rs {
		if r.Type == "CAA" && r.Name == h.Name {
			var f struct {
				Flags *int   `json:"flags"`
				Tag   string `json:"tag"`
				Value string `json:"value"`
			}
			if json.Unmarshal([]byte(r.Data), &f) == nil {
				flags := 0
				if f.Flags != nil {
					flags = *f.Flags
				}
				own = append(own, strconv.Itoa(flags)+" "+f.Tag+" "+strconv.Quote(f.Value))
			}
		}
	}
	if len(own) > 0 {
		sub.CAA = own // a hostname's own CAA replaces the domain's policy
	}
	if c, err := q.LastChallenge(ctx, h.ID); err == nil {
		sub.LastChallenge = time.UnixMilli(c.CreatedAt)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	return diagnose.Run(ctx, s.cfg, sub), nil
}
