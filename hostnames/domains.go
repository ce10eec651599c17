package hostnames

import (
	"context"
	"errors"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

// ProvisioningRetry is when to try again after DOMAIN_PROVISIONING.
const ProvisioningRetry = time.Minute

// DomainPath is where a team reads a domain's state (the Location of
// DOMAIN_PROVISIONING).
func DomainPath(id string) string { return "/api/v1/domains/" + id }

// teamDomain picks the [P2] domain a hostname is minted on: the one asked
// for, which must be the team's, or else the team's oldest active domain
// within the key's write reach.
func (s *Service) teamDomain(ctx context.Context, tx *storage.Tx, acct *storage.Account, p *access.Principal, want *string) (*storage.Domain, error) {
	team, err := tx.DomainsOf(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	if want != nil {
		name := domains.Normalize(*want)
		for i := range team {
			if team[i].Name == name {
				// Out of reach: the key learns nothing of the domain's state.
				if err := p.Require(access.HostnamesWrite, access.Target{Domain: name}); err != nil {
					return nil, err
				}
				if team[i].Status == storage.DomainProvisioning {
					return nil, provisioning(&team[i])
				}
				return &team[i], nil
			}
		}
		return nil, apierror.BadRequest("domain %q is not one of this team's domains", *want)
	}
	if len(team) == 0 {
		return nil, noDomain()
	}
	var pending *storage.Domain
	for i := range team {
		d := &team[i]
		if !p.Allows(access.HostnamesWrite, access.Target{Domain: d.Name}) {
			continue
		}
		if d.Status == storage.DomainActive {
			return d, nil
		}
		if pending == nil {
			pending = d
		}
	}
	if pending != nil {
		return nil, provisioning(pending)
	}
	return nil, p.Require(access.HostnamesWrite, access.Target{Domain: team[0].Name})
}

func provisioning(d *storage.Domain) error {
	e := apierror.New(apierror.CodeDomainProvisioning, "domain %s is still being set up; retry later, or follow Location for its state", d.Name)
	e.RetryAfter, e.Location = ProvisioningRetry, DomainPath(d.ID)
	return e
}

// TeamDomain is a domain of the team as a team member may read it, with the
// key's read reach applied (any scope of the key that reaches the domain).
func (s *Service) TeamDomain(ctx context.Context, p *access.Principal, id string) (*storage.Domain, error) {
	d, err := s.store.Reader().Domain(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && d.AccountID != p.AccountID {
		return nil, apierror.NotFound("Domain not found")
	}
	if err != nil {
		return nil, err
	}
	t := access.Target{Domain: d.Name}
	for _, sc := range []string{access.HostnamesRead, access.HostnamesWrite, access.DNS01Write} {
		if p.Allows(sc, t) {
			return d, nil
		}
	}
	return nil, p.Require(access.HostnamesRead, t)
}

// TeamDomains lists the team's domains that some scope of the key reaches.
func (s *Service) TeamDomains(ctx context.Context, p *access.Principal) ([]storage.Domain, error) {
	all, err := s.store.Reader().Domains(ctx)
	if err != nil {
		return nil, err
	}
	out := []storage.Domain{}
	for _, d := range all {
		if d.AccountID != p.AccountID {
			continue
		}
		t := access.Target{Domain: d.Name}
		if p.Allows(access.HostnamesRead, t) || p.Allows(access.HostnamesWrite, t) || p.Allows(access.DNS01Write, t) {
			out = append(out, d)
		}
	}
	return out, nil
}
