package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
)

// Every path a tenant can loop on, churned at once until it is refused, from
// one account each, leaves at most the rows the README's Security section
// states ("Rows per tenant"): [P1] create and release, [P1] updates, [P2]
// a hostname with a record and a DNS-01 credential minted and released,
// [P2] API keys (dashboard) and TSIG keys created and revoked. Refusals
// are audited up to 60 a minute per caller, not one row each.
func TestChurnRowBounds(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			p1 := start(t, options{dialect: d})
			p2 := start(t, updateOptions(t, d, 2)) // TSIG keys need a seal key
			free, freeKey := p1.account("free")
			mover, moverKey := p1.account("free")
			moved := p1.must(201, "POST", "/api/v1/hostnames", moverKey, map[string]any{"ip": "198.41.0.1"}).str("id")
			team, teamKey := p2.team(t, "churn.example.net")
			link, _ := p2.linkToken(t, team)
			dash := p2.dashboard()
			csrf := dash.signIn(t, "/dashboard/signin/link", link)

			var (
				accepted  sync.Map // account -> *atomic.Int64: writes answered 2xx
				published atomic.Int64
			)
			ok := func(account string) {
				n, _ := accepted.LoadOrStore(account, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
			// loop runs body until it has been refused (429): each path is
			// churned until it meets its limit, however slow the machine (at
			// most two minutes).
			loop := func(body func(i int) (status int)) func() {
				return func() {
					for i, began := 0, time.Now(); time.Since(began) < 2*time.Minute; i++ {
						if body(i) == 429 {
							return
						}
					}
				}
			}
			paths := []func(){
				loop(func(i int) int { // [P1] create and release
					r := p1.do("POST", "/api/v1/hostnames", freeKey, map[string]any{"ip": fmt.Sprintf("198.41.%d.%d", 1+i/250%250, 1+i%250)})
					if r.status == 201 {
						ok(free)
						if p1.do("DELETE", "/api/v1/hostnames/"+r.str("id"), freeKey, nil).status == 200 {
							ok(free)
						}
					}
					return r.status
				}),
				loop(func(i int) int { // [P1] updates
					r := p1.do("PUT", "/api/v1/hostnames/"+moved, moverKey, map[string]any{"ip": fmt.Sprintf("198.41.%d.%d", 1+i/250%250, 1+i%250)})
					if r.status == 200 {
						ok(mover)
					}
					return r.status
				}),
				loop(func(i int) int { // [P2] mint, publish, release
					r := p2.do("POST", "/api/v1/hostnames", teamKey, map[string]any{"ip": "198.41.0.4", "subdomain": fmt.Sprintf("c%d", i)})
					if r.status != 201 {
						return r.status
					}
					ok(team)
					id := r.str("id")
					for end := time.Now().Add(2 * time.Second); p2.do("GET", "/api/v1/hostnames/"+id, teamKey, nil).str("status") == "pending" && time.Now().Before(end); {
						time.Sleep(10 * time.Millisecond) // records wait for a live name
					}
					if p2.do("POST", recPath(id), teamKey, recObj{"type": "TXT", "text": "churn"}).status == 201 {
						ok(team)
						published.Add(1)
					}
					if p2.do("POST", "/api/v1/hostnames/"+id+"/acme-credential", teamKey, nil).status == 201 {
						ok(team)
					}
					if p2.do("DELETE", "/api/v1/hostnames/"+id, teamKey, nil).status == 200 {
						ok(team)
					}
					return r.status
				}),
				loop(func(i int) int { // [P2] TSIG keys
					r := p2.do("POST", "/api/v1/tsig-keys", teamKey, map[string]any{"name": "churn"})
					if r.status == 201 {
						ok(team)
						if p2.do("DELETE", "/api/v1/tsig-keys/"+r.str("id"), teamKey, nil).status == 200 {
							ok(team)
						}
					}
					return r.status
				}),
				loop(func(i int) int { // [P2] API keys, in the dashboard
					status, _, _ := dash.send(t, "/dashboard/team/keys", url.Values{"csrf": {csrf}, "name": {"churn"}, "reach": {"team"}, "scope": {"hostnames:read"}})
					if status != 201 {
						return status
					}
					ok(team)
					for _, k := range p2.must(200, "GET", "/api/admin/accounts/"+team+"/keys", p2.admin, nil).body["keys"].([]any) {
						k := k.(map[string]any)
						if k["name"] == "churn" && k["revoked_at"] == nil {
							if status, _, _ := dash.send(t, "/dashboard/team/keys/"+k["id"].(string)+"/revoke", url.Values{"csrf": {csrf}}); status < 400 {
								ok(team)
							}
						}
					}
					return status
				}),
			}
			for range 3 { // an updater's allowance takes several clients in a few seconds
				paths = append(paths, paths[1])
			}
			began := time.Now()
			var wg sync.WaitGroup
			for _, p := range paths {
				wg.Add(1)
				go func() { defer wg.Done(); p() }()
			}
			wg.Wait()
			minutes := int64(time.Since(began)/time.Minute) + 1
			hours := int64(time.Since(began)/time.Hour) + 1

			writes := func(account string) int64 {
				n, _ := accepted.Load(account)
				if n == nil {
					return 0
				}
				return n.(*atomic.Int64).Load()
			}
			rows := func(db *sql.DB, q string, args ...any) int64 {
				var n int64
				if err := db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return n
			}
			db1, db2 := openSQL(t, d, p1.dsn), openSQL(t, d, p2.dsn)
			refills := func(perHour int64) int64 { return perHour * int64(time.Since(began)) / int64(time.Hour) }
			// Refusals: 60 a minute per caller, counted per calendar minute,
			// so a run across a minute's end may have two minutes' worth.
			refusals := 2 * 60 * (minutes + 1)
			bounds := []struct {
				what  string
				db    *sql.DB
				query string
				arg   string
				max   int64
			}{
				{"[P1] hostname rows of a churning account", db1, "SELECT COUNT(*) FROM hostnames WHERE account_id = $1", free, 100 + refills(100) + 1},
				{"[P1] retired labels of it", db1, "SELECT COUNT(*) FROM retired_labels WHERE account_id = $1", free, 100 + refills(100) + 1},
				{"[P1] rate buckets of it", db1, "SELECT COUNT(*) FROM rate_buckets WHERE account_id = $1", free, 2},
				{"[P1] audit rows of it", db1, "SELECT COUNT(*) FROM audit_log WHERE account_id = $1", free, writes(free) + refusals},
				{"[P1] audit rows of an account that updates", db1, "SELECT COUNT(*) FROM audit_log WHERE account_id = $1", mover, 1 + writes(mover) + refusals},
				{"[P1] rate buckets of it", db1, "SELECT COUNT(*) FROM rate_buckets WHERE account_id = $1", mover, 2},
				{"[P2] hostname rows of a churning team", db2, "SELECT COUNT(*) FROM hostnames WHERE account_id = $1", team, 30 * minutes},
				{"[P2] records of released hostnames", db2, "SELECT COUNT(*) FROM records r JOIN hostnames h ON h.id = r.hostname_id WHERE h.account_id = $1 AND h.status = 'released'", team, 0},
				{"[P2] DNS-01 credentials of released hostnames", db2, "SELECT COUNT(*) FROM acme_credentials c JOIN hostnames h ON h.id = c.hostname_id WHERE h.account_id = $1 AND h.status = 'released'", team, 0},
				{"[P2] API keys (one made by the operator)", db2, "SELECT COUNT(*) FROM api_keys WHERE account_id = $1", team, 1 + 40*hours},
				{"[P2] TSIG keys", db2, "SELECT COUNT(*) FROM tsig_keys WHERE account_id = $1", team, 20 * hours},
				{"[P2] rate events (registrations, record writes, API and TSIG keys, by their windows)", db2, "SELECT COUNT(*) FROM rate_events WHERE account_id = $1", team, 30*minutes + 60*minutes + 40*hours + 20*hours},
				{"[P2] audit rows of the team", db2, "SELECT COUNT(*) FROM audit_log WHERE account_id = $1", team, writes(team) + 3*refusals + 10},
			}
			for _, b := range bounds {
				if n := rows(b.db, b.query, b.arg); n > b.max {
					t.Errorf("%s: %d rows, documented bound %d", b.what, n, b.max)
				} else {
					t.Logf("%s: %d rows (bound %d)", b.what, n, b.max)
				}
			}
			if writes(free) < 200 || writes(mover) < 600 || writes(team) < 60 || published.Load() == 0 {
				t.Errorf("the churn did not reach the limits: [P1] %d creates and releases, %d updates; [P2] %d writes, %d records",
					writes(free), writes(mover), writes(team), published.Load())
			}
		})
	}
}
