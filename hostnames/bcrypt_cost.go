//go:build !race

package hostnames

// dummyHash is a bcrypt hash at acme-dns's cost (10) of a password nobody
// knows (random, thrown away): compared against when there is no real
// hash to compare, it takes the time a real one takes and never matches.
const dummyHash = "$2a$10$uiaEufJj7pUnsos5PuezderbjOB43uVDxplpxuFCDFC9DI9T7UHX6"
