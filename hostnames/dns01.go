package hostnames

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
)

// DNS-01 challenge publishing, acme-dns style, in both profiles: a
// credential is made for one hostname through the authenticated API; an ACME
// client then publishes challenge values with it at _acme-challenge.<name>.

// MaxCredentials is the spec's limit of DNS-01 credentials a hostname holds.
const MaxCredentials = 5

// DefaultACMEUpdates is the acme-dns updates a credential may make a
// minute when the Corefile sets none (acme_update_per_minute). Two values
// are served at a time and an order needs at most two, so no client needs
// more than a few a minute; 30 leaves retries room and holds a client
// stuck in a loop to a write every 2 s.
const DefaultACMEUpdates = 30

var challengeValue = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// NewCredential is a created credential; Password is shown once.
type NewCredential struct {
	Username, Password, Fulldomain string
}

// CreateCredential makes a DNS-01 credential for a live hostname.
func (s *Certificates) CreateCredential(ctx context.Context, p *access.Principal, hostnameID string) (*NewCredential, error) {
	password := apikey.Random(25) // 40 characters, 200 bits
	out := &NewCredential{Username: uuid4(), Password: password}
	err := s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.owned(ctx, tx, p, hostnameID, access.DNS01Write)
		if err != nil {
			return err
		}
		if st := s.Status(h, s.now()); st != storage.StatusLive {
			return apierror.Conflict("hostname %s is %s; credentials are made for live hostnames", h.Name, st)
		}
		n, err := tx.CountCredentials(ctx, h.ID)
		if err != nil {
			return err
		}
		if n >= MaxCredentials {
			return apierror.BadRequest("hostname %s holds %d DNS-01 credentials, the most it may", h.Name, MaxCredentials)
		}
		out.Fulldomain = records.ChallengeLabel + "." + h.Name
		return tx.InsertCredential(ctx, &storage.Credential{ID: out.Username, HostnameID: h.ID,
			PasswordHash: apikey.Hash(password), CreatedAt: s.now().UnixMilli()})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ChallengeUpdate is an acme-dns update call.
type ChallengeUpdate struct {
	User, Key string // X-Api-User, X-Api-Key
	Subdomain string
	TXT       string
	From      netip.Addr // the caller, for a registration's allowfrom
}

// PublishChallenge checks an update call and publishes its value: served at
// once on this node, within the feed's lag on the others.
//
// A credential refused costs one bcrypt comparison whichever way it was
// refused (bcrypt.go): an unknown username is not answered sooner than a
// known one with a wrong password, imported or not.
func (s *Certificates) PublishChallenge(ctx context.Context, u ChallengeUpdate) error {
	if u.User == "" || u.Key == "" {
		// No username is empty and no password matches "": nothing to
		// look up, for anyone.
		return errBadCredentials()
	}
	err := s.publishChallenge(ctx, u, false)
	var imp *importedPassword
	if errors.As(err, &imp) {
		// An imported acme-dns password: checked (bcrypt) and replaced
		// outside any transaction, then the update again.
		if err := s.upgradeImported(ctx, imp, u.Key); err != nil {
			return err
		}
		return s.publishChallenge(ctx, u, true)
	}
	if p, ok := apierror.As(err); ok && p.Code == apierror.CodeUnauthorized {
		if _, cerr := s.bcrypts.compare(ctx, dummyHash, u.Key); cerr != nil {
			return cerr
		}
	}
	return err
}

func errBadCredentials() error {
	return apierror.New(apierror.CodeUnauthorized, "invalid credentials: X-Api-User or X-Api-Key is wrong")
}

func (s *Certificates) publishChallenge(ctx context.Context, u ChallengeUpdate, upgraded bool) error {
	return s.write(ctx, "acme-dns:"+u.User, func(ctx context.Context, tx *storage.Tx) error {
		c, err := tx.Credential(ctx, u.User)
		if errors.Is(err, storage.ErrNotFound) {
			return s.publishRegistered(ctx, tx, u, upgraded)
		}
		if err == nil && !apikey.Verify(c.PasswordHash, u.Key) {
			return errBadCredentials()
		}
		if err != nil {
			return err
		}
		// Locked: the credential's updates are counted one at a time.
		h, err := tx.LockHostname(ctx, c.HostnameID)
		if err != nil {
			return err
		}
		storage.AuditAccount(ctx, h.AccountID)
		a, err := tx.Account(ctx, h.AccountID)
		if err != nil {
			return err
		}
		if err := accounts.CheckOpen(a, s.now()); err != nil {
			return err
		}
		if u.Subdomain == "" {
			return apierror.BadRequest("subdomain is required: the credential's subdomain (%s)", u.User)
		}
		if u.Subdomain != u.User {
			return apierror.Forbidden("subdomain %q does not belong to this credential (use %s)", u.Subdomain, u.User)
		}
		if err := checkChallenge(u.TXT); err != nil {
			return err
		}
		switch st := s.Status(h, s.now()); st {
		case storage.StatusLive, storage.StatusPending:
		case storage.StatusSuspended:
			return apierror.Forbidden("hostname %s is suspended while an abuse report is reviewed; its credentials return when it is restored", h.Name)
		default:
			return apierror.New(apierror.CodeUnauthorized, "invalid credentials: hostname %s is %s", h.Name, st)
		}
		if err := s.takeACMEUpdate(ctx, tx, "credential:"+c.ID); err != nil {
			return err
		}
		return s.publish(ctx, tx, h, u.TXT)
	})
}

func checkChallenge(v string) error {
	if !challengeValue.MatchString(v) {
		return apierror.BadRequest("txt must be 43 characters of A-Z a-z 0-9 _ - (a DNS-01 key authorization digest)")
	}
	return nil
}

// publish serves value at _acme-challenge.<h>, the two newest kept.
func (s *Certificates) publish(ctx context.Context, tx *storage.Tx, h *storage.Hostname, value string) error {
	if err := tx.AddChallenge(ctx, &storage.Challenge{HostnameID: h.ID, Value: value, CreatedAt: s.now().UnixMilli()}, records.ChallengeValues); err != nil {
		return err
	}
	return tx.Changed(ctx, storage.KindHostname, h.ID)
}

// SetChallenges is a key's change of a hostname's challenge values (DNS
// UPDATE): add are published, remove are withdrawn, under the dns01:write
// scope and the same per-minute limit as an acme-dns credential's updates
// (counted for the key). A value that is not served is not withdrawn.
func (s *Certificates) SetChallenges(ctx context.Context, p *access.Principal, hostnameID string, add, remove []string) error {
	for _, v := range add {
		if err := checkChallenge(v); err != nil {
			return err
		}
	}
	return s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.owned(ctx, tx, p, hostnameID, access.DNS01Write)
		if err != nil {
			return err
		}
		switch st := s.Status(h, s.now()); st {
		case storage.StatusLive, storage.StatusPending:
		default:
			return apierror.Conflict("hostname %s is %s; challenges are published for live hostnames", h.Name, st)
		}
		if len(add) > 0 {
			if err := s.takeACMEUpdate(ctx, tx, "key:"+p.KeyID); err != nil {
				return err
			}
		}
		for _, v := range remove {
			if err := tx.DeleteChallenge(ctx, h.ID, v); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
		}
		for _, v := range add {
			if err := s.publish(ctx, tx, h, v); err != nil {
				return err
			}
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
}

// takeACMEUpdate counts one update of a credential (who) against its limit,
// or answers 429 RATE_LIMITED with Retry-After. Only updates that would
// publish count: a refused one writes nothing.
func (s *Certificates) takeACMEUpdate(ctx context.Context, tx *storage.Tx, who string) error {
	limit := ratelimit.Limit{Kind: "acme-update", Max: s.acmeUpdates(), Window: time.Minute, What: "updates"}
	err := ratelimit.Take(ctx, tx, who, limit, s.now())
	if p, ok := apierror.As(err); ok && p.Code == apierror.CodeRateLimited {
		p.Message = fmt.Sprintf("more than %d updates a minute with this credential; retry later", limit.Max)
	}
	return err
}

func (s *Certificates) acmeUpdates() int {
	if s.updates > 0 {
		return s.updates
	}
	return DefaultACMEUpdates
}

func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
