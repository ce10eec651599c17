package accounts

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
)

// Dashboard credentials: a team member never types an API key into a form;
// the operator issues a one-time sign-in link instead, and a browser that
// used one (or the operator's token) holds a session. Both secrets are 256
// random bits, stored only as hashes.
const (
	SigninLinkTTL = 24 * time.Hour
	SessionTTL    = 12 * time.Hour
)

// List returns every account, oldest first.
func (s *Service) List(ctx context.Context) ([]storage.Account, error) {
	return s.store.Reader().Accounts(ctx)
}

// SigninLinkPath is the dashboard page a sign-in link opens.
const SigninLinkPath = "/dashboard/signin/link"

// SigninURL is the link a team member opens to sign in with token.
func SigninURL(baseURL, token string) string {
	return strings.TrimRight(baseURL, "/") + SigninLinkPath + "?token=" + url.QueryEscape(token)
}

// SigninLinkID is the id a sign-in link is listed and withdrawn by: the
// hash it is stored as, which cannot sign anyone in.
func SigninLinkID(token string) string { return apikey.Hash(token) }

// CreateSigninLink makes a one-time sign-in token for a member of the
// account, good for SigninLinkTTL.
func (s *Service) CreateSigninLink(ctx context.Context, accountID string) (token string, expiresAt time.Time, err error) {
	now := s.now()
	token = apikey.Random(32)
	l := &storage.SigninLink{ID: SigninLinkID(token), AccountID: accountID,
		ExpiresAt: now.Add(SigninLinkTTL).UnixMilli(), CreatedAt: now.UnixMilli()}
	_, err = s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		a, err := tx.Account(ctx, accountID)
		if errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil {
			return err
		}
		if a.Access(now.UnixMilli()) != storage.AccountActive {
			return apierror.Conflict("no sign-in link for account %s: it is %s; open it again first", a.ID, a.Access(now.UnixMilli()))
		}
		return tx.InsertSigninLink(ctx, l)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, time.UnixMilli(l.ExpiresAt).UTC(), nil
}

// Session is a signed-in dashboard browser.
type Session struct {
	AccountID string // "" for the operator
	ExpiresAt time.Time
	grant     string // operator: what grantOf stored of the admin token that started it
}

// Operator reports whether the session is the operator's.
func (s *Session) Operator() bool { return s.AccountID == "" }

// Granted reports whether an operator session was started with token, the
// admin token in force now: once the token is rotated, the sessions it
// started end too. It costs a key derivation (see grantOf): cache it.
func (s *Session) Granted(token string) bool {
	saltHex, sumHex, ok := strings.Cut(s.grant, ":")
	salt, err1 := hex.DecodeString(saltHex)
	want, err2 := hex.DecodeString(sumHex)
	if !ok || err1 != nil || err2 != nil || token == "" {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, token, salt, grantIterations, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// Grant is what the session stores of the admin token that started it
// (opaque; "" for a team member's), to cache Granted by.
func (s *Session) Grant() string { return s.grant }

// grantIterations make a stored grant slow to test guesses against: the
// admin token may be one a person chose, and session rows travel in
// backups and migrations.
const grantIterations = 100_000

// grantOf is what an operator session stores of the admin token that
// started it: "<salt>:<PBKDF2-SHA256 of the token>", in hex.
func grantOf(token string) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum, err := pbkdf2.Key(sha256.New, token, salt, grantIterations, 32)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(salt) + ":" + hex.EncodeToString(sum), nil
}

// RedeemSigninLink uses a sign-in token and starts a session for its
// account; the returned secret goes into the browser's cookie.
func (s *Service) RedeemSigninLink(ctx context.Context, token string) (secret string, sess *Session, err error) {
	return s.startSession(ctx, "", func(ctx context.Context, tx *storage.Tx, now time.Time) (string, error) {
		id, err := tx.UseSigninLink(ctx, apikey.Hash(token), now.UnixMilli())
		if errors.Is(err, storage.ErrNotFound) {
			return "", apierror.New(apierror.CodeUnauthorized,
				"this sign-in link is not valid: it was used already, it expired, it was withdrawn, or it was mistyped; ask your operator for a new one")
		}
		return id, err
	})
}

// StartOperatorSession starts an operator session for the admin token the
// caller has checked (this package does not hold it); the session lasts
// only as long as that token is the admin token (see Granted).
func (s *Service) StartOperatorSession(ctx context.Context, token string) (secret string, sess *Session, err error) {
	grant, err := grantOf(token)
	if err != nil {
		return "", nil, err
	}
	return s.startSession(ctx, grant, func(context.Context, *storage.Tx, time.Time) (string, error) { return "", nil })
}

// startSession writes a new session for the account claim names ("" for
// the operator) in one transaction, clearing out expired sessions and links.
func (s *Service) startSession(ctx context.Context, grant string, claim func(context.Context, *storage.Tx, time.Time) (string, error)) (string, *Session, error) {
	now := s.now()
	secret := apikey.Random(32)
	row := &storage.Session{ID: apikey.Hash(secret), ExpiresAt: now.Add(SessionTTL).UnixMilli(), CreatedAt: now.UnixMilli(), GrantHash: grant}
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.PurgeDashboard(ctx, now.UnixMilli()); err != nil {
			return err
		}
		id, err := claim(ctx, tx, now)
		if err != nil {
			return err
		}
		row.AccountID = id
		return tx.InsertSession(ctx, row)
	})
	if err != nil {
		return "", nil, err
	}
	return secret, sessionOf(row), nil
}

// ErrNoSession is Session's answer for a secret that is unknown, signed out
// or expired.
var ErrNoSession = errors.New("accounts: no such dashboard session")

// Session finds the live session of a cookie's secret. The expiry is checked
// here, against the stored row, whatever the browser's cookie says.
func (s *Service) Session(ctx context.Context, secret string) (*Session, error) {
	if secret == "" {
		return nil, ErrNoSession
	}
	row, err := s.store.Reader().Session(ctx, apikey.Hash(secret), s.now().UnixMilli())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	return sessionOf(row), nil
}

// EndSession signs a session out, on every node at once.
func (s *Service) EndSession(ctx context.Context, secret string) error {
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		return tx.DeleteSession(ctx, apikey.Hash(secret))
	})
	return err
}

func sessionOf(row *storage.Session) *Session {
	return &Session{AccountID: row.AccountID, ExpiresAt: time.UnixMilli(row.ExpiresAt).UTC(), grant: row.GrantHash}
}

// RevokeAccountKey revokes a key of one account: a team member's revocation,
// which must not reach another team's key (404, as for a key that does not
// exist).
func (s *Service) RevokeAccountKey(ctx context.Context, accountID, keyID string) error {
	k, err := s.store.Reader().Key(ctx, keyID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (k.AccountID != accountID || k.RevokedAt != 0) {
		return apierror.NotFound("Key not found")
	}
	if err != nil {
		return err
	}
	return s.RevokeKey(ctx, keyID)
}
