package records

import "time"

// A DNS-01 challenge is TXT at ChallengeLabel under a hostname, published
// through the acme-dns API or by the certificate manager.
const (
	ChallengeLabel = "_acme-challenge"
	// ChallengeValues are kept and served at once: an apex and a wildcard
	// in one order validate two values at the same name.
	ChallengeValues = 2
	// ChallengeLife is how long after the newest value was written the
	// values are served; a CA validates within minutes.
	ChallengeLife = 24 * time.Hour
	ChallengeTTL  = 60
)
