//go:build !race

package e2e

// abuseHashCost is the bcrypt cost the tests import acme-dns passwords at:
// acme-dns's own, which the service's dummy hash matches.
const abuseHashCost = 10
