//go:build race

package e2e

// abuseHashCost, with the race detector, is the cost of the service's
// dummy hash in such a build (hostnames/bcrypt_cost_race.go): at cost 10
// the detector makes a comparison take seconds.
const abuseHashCost = 5
