package hostnames

import (
	"context"
	"errors"
	"github.com/hostmint/hostmint/accounts"
	"strings"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
)

// Certificate modes and CAs ([P2]).
const (
	CertSelf    = "self"
	CertManaged = "managed"
	CertCSR     = "csr"
)

// CreateInput is a create request, fields as sent (nil: not sent).
type CreateInput struct {
	IP          *string
	Label       *string // [P1]
	Subdomain   *string // [P2]
	Domain      *string // [P2]
	Certificate *string // [P2]
	CA          *string // [P2]
}

// created is a create request after the checks that need no database.
type created struct {
	addr        parsedIP
	label       string // custom label or subdomain, "" for an opaque one
	certificate string
	ca          string
}

func (s *Service) checkCreate(in CreateInput) (*created, error) {
	addr, err := parseIP(in.IP)
	if err != nil {
		return nil, err
	}
	c := &created{addr: addr}
	custom, field := in.Label, "label"
	if !s.profile.Teams() {
		for name, v := range map[string]*string{"subdomain": in.Subdomain, "domain": in.Domain, "certificate": in.Certificate, "ca": in.CA} {
			if v != nil {
				return nil, apierror.BadRequest("%s is not a field of this deployment (profile 1)", name)
			}
		}
	} else {
		if in.Label != nil {
			return nil, apierror.BadRequest("label is not a field of this deployment (profile 2); use subdomain")
		}
		custom, field = in.Subdomain, "subdomain"
		if err := s.checkCertificate(c, in); err != nil {
			return nil, err
		}
	}
	if custom != nil {
		c.label = labels.Lower(*custom)
		if err := s.checkLabel(field, c.label); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (s *Service) checkCertificate(c *created, in CreateInput) error {
	c.certificate = CertSelf
	if in.Certificate != nil {
		c.certificate = *in.Certificate
	}
	switch c.certificate {
	case CertSelf:
		if in.CA != nil {
			return apierror.BadRequest("ca applies to certificate managed or csr, not self")
		}
		return nil
	case CertManaged, CertCSR:
	default:
		return apierror.BadRequest("certificate must be self, managed or csr, got %q", c.certificate)
	}
	c.ca = certs.LetsEncrypt
	if in.CA != nil {
		c.ca = *in.CA
	}
	if !certs.KnownCA(c.ca) {
		return apierror.BadRequest("ca must be %s, got %q", strings.Join(certs.CANames, " or "), c.ca)
	}
	if c.certificate == CertManaged && len(s.cfg.SealKey) == 0 {
		return apierror.NotImplemented("certificate managed needs a certificate encryption key, and this deployment has none configured")
	}
	if !s.cfg.Certs.Configured() {
		return apierror.NotImplemented("certificate %s needs an ACME CA, and this deployment has none configured (acme_ca)", c.certificate)
	}
	if in.CA != nil && !s.cfg.Certs.HasCA(c.ca) {
		return apierror.BadRequest("ca %s is not configured in this deployment", c.ca)
	}
	return nil
}

// Create registers an address and mints a hostname.
func (s *Service) Create(ctx context.Context, p *access.Principal, in CreateInput) (*storage.Hostname, error) {
	c, err := s.checkCreate(in)
	if err != nil {
		return nil, err
	}
	if s.profile.Teams() && p.Reach(access.HostnamesWrite).Empty() {
		return nil, p.Require(access.HostnamesWrite, access.Target{})
	}
	first := c.label // the label tried first
	if s.profile.PlanGates() {
		if first == "" {
			first = s.drawOpaque()
		}
		// What the write reads first, for its batch to read with the others'.
		ctx = storage.Expect(ctx, storage.ExpectAccountAndPool(p.AccountID, first, s.cfg.ACMEDNS))
	}
	var h *storage.Hostname
	err = s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h = nil
		var (
			acct  *storage.Account
			dom   *storage.Domain
			label = first
			known *storage.LabelState // the label's use on dom, when read with it
			err   error
		)
		if s.profile.PlanGates() {
			// The pool domain (not acme-dns registrations' domain, when it is
			// a domain) is read with the account's lock: one round trip.
			var st storage.LabelState
			acct, dom, st, err = tx.AccountAndPool(ctx, p.AccountID, label, s.cfg.ACMEDNS)
			known = &st
		} else {
			acct, err = tx.LockAccount(ctx, p.AccountID)
		}
		if err != nil {
			return err
		}
		now := s.now()
		if err := accounts.CheckOpen(acct, now); err != nil {
			return err // suspended since its key was checked
		}
		if s.profile.PlanGates() {
			if err := s.checkPlan(acct, c); err != nil {
				return err
			}
			if dom == nil {
				return noDomain()
			}
		} else {
			if !acct.Billing {
				return apierror.New(apierror.CodePaymentRequired, "this team has no card on file; finish signing up before registering hostnames")
			}
			if dom, err = s.teamDomain(ctx, tx, acct, p, in.Domain); err != nil {
				return err
			}
		}
		if err := p.Require(access.HostnamesWrite, access.Target{Domain: dom.Name}); err != nil {
			return err
		}
		if s.profile.Teams() {
			if err := ratelimit.Take(ctx, tx, acct.ID, ratelimit.Registrations, now); err != nil {
				return err
			}
		}
		if err := s.checkCap(ctx, tx, acct, now); err != nil {
			return err
		}
		if !s.profile.Teams() {
			ratelimit.Charge(tx, acct.ID, createsOf(s.Cap(acct)), now)
		}
		if label, err = s.pickLabel(ctx, tx, dom, label, c.label == "", acct.ID, known); err != nil {
			return err
		}
		ms := now.UnixMilli()
		h = &storage.Hostname{
			ID: "h_" + apikey.Random(10), AccountID: acct.ID, DomainID: dom.ID,
			Label: label, Name: label + "." + dom.Name, IP: c.addr.text, Addrs: c.addr.text,
			Class: string(c.addr.class), Certificate: c.certificate, CA: c.ca,
			Status: storage.StatusLive, CreatedAt: ms, UpdatedAt: ms, ExpiresAt: s.expiry(now),
		}
		if s.profile.Teams() {
			h.Status = storage.StatusPending // live once every nameserver answers for it
		}
		if h.Certificate == CertManaged { // its certificate row refers to it
			if err := tx.InsertHostname(ctx, h); err != nil {
				return err
			}
		} else {
			tx.InsertLater(storage.KindHostname, h.ID, h) // with the change row: one round trip
		}
		if err := requestManaged(ctx, tx, h); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	if errors.Is(err, storage.ErrConflict) && h != nil { // the label, taken since it was checked
		return nil, apierror.Conflict("%s is taken", h.Name)
	}
	return h, err
}

// LockLabel reads, for a write, the hostname that holds label on dom
// (storage.ErrNotFound: none), as DNS UPDATE reads each name it is sent.
// [P1] When none holds it, the same round trip reads what Create reads to
// mint it for p, so a mint that follows reads nothing more.
func (s *Service) LockLabel(ctx context.Context, tx *storage.Tx, p *access.Principal, dom *storage.Domain, label string) (*storage.Hostname, error) {
	if s.profile.PlanGates() {
		return tx.HostnameForMint(ctx, dom.ID, label, p.AccountID, s.cfg.ACMEDNS)
	}
	return tx.LockHostnameByLabel(ctx, dom.ID, label)
}

// ExpectLabel is what LockLabel(ctx, tx, p, dom, label) reads first in a
// batch, for the batch to read with its other parts' first reads
// (storage.Expect); false where that read is not one a batch makes.
func (s *Service) ExpectLabel(p *access.Principal, dom *storage.Domain, label string) (storage.Expected, bool) {
	if !s.profile.PlanGates() {
		return storage.Expected{}, false
	}
	return storage.ExpectHostnameForMint(dom.ID, label, p.AccountID, s.cfg.ACMEDNS), true
}

// checkPlan applies profile 1's plan gates.
func (s *Service) checkPlan(acct *storage.Account, c *created) error {
	if c.addr.class == addrclass.Private && !plans.PrivateAddresses(acct.Plan) {
		return apierror.Forbidden("private and reserved addresses need the Business plan (this account is on %s)", acct.Plan)
	}
	if c.label != "" && !plans.CustomLabels(acct.Plan) {
		return apierror.Forbidden("custom labels need the Pro or Business plan (this account is on %s)", acct.Plan)
	}
	return nil
}

// checkCap refuses a hostname more when the account holds its cap. The
// account's counter counts expired [P1] names too, so only at the cap are
// those looked up, and no more of them than would bring the count under
// it: the check costs the same at any account size. The account was read
// under its lock, so the count holds until the commit.
func (s *Service) checkCap(ctx context.Context, tx *storage.Tx, acct *storage.Account, now time.Time) error {
	held, c := acct.ActiveHostnames, s.Cap(acct)
	if held < c {
		return nil
	}
	need := held - c + 1
	expired, err := tx.CountExpired(ctx, acct.ID, now.UnixMilli(), need)
	if err != nil || expired >= need {
		return err
	}
	// Not a matter of time: retrying in a minute only helps if one is released.
	return ratelimit.Refuse(apierror.RateLimited("active-hostname cap reached: %d of %d; release one first", held-expired, c), time.Minute)
}

func noDomain() error {
	return apierror.New(apierror.CodeNoDomainAvailable, "no domain is available for new hostnames, and none is being set up; ask the operator to add one")
}

// pickLabel settles the label of a new hostname: label if it is free (known
// is its use, when read already), else, for an opaque one (opaque), a
// fresh draw.
func (s *Service) pickLabel(ctx context.Context, tx *storage.Tx, dom *storage.Domain, label string, opaque bool, accountID string, known *storage.LabelState) (string, error) {
	if label != "" {
		var err error
		if known != nil {
			err = s.labelVerdict(dom, label, accountID, *known)
		} else {
			err = s.labelFree(ctx, tx, dom, label, accountID)
		}
		if err == nil || !opaque {
			return label, err
		}
		if _, ok := apierror.As(err); !ok {
			return "", err
		}
	}
	return s.opaqueLabel(ctx, tx, dom, accountID)
}

// labelFree checks that label can be taken on dom by account: nobody holds
// it, and it was not released by anyone ([P1]) or by another team ([P2]).
func (s *Service) labelFree(ctx context.Context, tx *storage.Tx, dom *storage.Domain, label, accountID string) error {
	held, by, retired, err := tx.LabelUse(ctx, dom.ID, label)
	if err != nil {
		return err
	}
	return s.labelVerdict(dom, label, accountID, storage.LabelState{Held: held, RetiredBy: by, Retired: retired})
}

// labelVerdict is labelFree's answer for a label whose use is known.
func (s *Service) labelVerdict(dom *storage.Domain, label, accountID string, st storage.LabelState) error {
	switch {
	case s.cfg.Nameservers[label+"."+dom.Name]:
		return apierror.Conflict("%s.%s is the name of one of this service's nameservers", label, dom.Name)
	case s.cfg.ACMEDNS != "" && (s.cfg.ACMEDNS == label+"."+dom.Name || strings.HasSuffix(s.cfg.ACMEDNS, "."+label+"."+dom.Name)):
		return apierror.Conflict("%s.%s holds this service's acme-dns registrations (%s)", label, dom.Name, s.cfg.ACMEDNS)
	case s.cfg.ACMEDNS != "" && (dom.Name == s.cfg.ACMEDNS || strings.HasSuffix(dom.Name, "."+s.cfg.ACMEDNS)):
		return apierror.Conflict("%s holds this service's acme-dns registrations; hostnames are made on other domains", dom.Name)
	case st.Held:
		return apierror.Conflict("%s.%s is taken", label, dom.Name)
	case !st.Retired:
		return nil
	case s.profile.RetiresLabels():
		return apierror.Conflict("%s.%s was released and is retired for good", label, dom.Name)
	case st.RetiredBy != accountID:
		return apierror.Conflict("%s.%s was released by another team and stays theirs", label, dom.Name)
	}
	return nil
}

// drawOpaque draws an opaque label that no policy refuses, or "" when a
// hundred draws found none (a policy that blocks nearly everything).
func (s *Service) drawOpaque() string {
	for range 100 {
		if l := labels.Opaque(); !s.cfg.Labels.Blocked(l) && !s.cfg.Reserved[l] {
			return l
		}
	}
	return ""
}

func (s *Service) opaqueLabel(ctx context.Context, tx *storage.Tx, dom *storage.Domain, accountID string) (string, error) {
	for range 8 {
		l := s.drawOpaque()
		if l == "" {
			break
		}
		err := s.labelFree(ctx, tx, dom, l, accountID)
		if err == nil {
			return l, nil
		}
		if _, ok := apierror.As(err); !ok {
			return "", err
		}
	}
	return "", errors.New("hostnames: no free opaque label after 8 draws")
}
