package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// post sends a JSON request from any goroutine (the harness's helpers
// fail the test, which only its own goroutine may do) and returns the
// status and the body.
func post(client *http.Client, method, url, token string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// 64 callers writing into one account at once are all answered 2xx: on
// SQLite the writes queue in the process, on PostgreSQL they wait for the
// account's row; neither answers "busy". Every name is then served.
func TestConcurrentWritesQueue(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("business", 100_000)
		const callers, each = 64, 8
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			names  []string
			failed = map[string]int{}
		)
		fail := func(what string) {
			mu.Lock()
			failed[what]++
			mu.Unlock()
		}
		for c := range callers {
			wg.Go(func() {
				for i := range each {
					code, raw, err := post(client, "POST", s.api+"/api/v1/hostnames", key, map[string]string{"ip": fmt.Sprintf("23.64.%d.%d", c, i)})
					var h struct{ ID, Hostname string }
					if err != nil || code != 201 || json.Unmarshal(raw, &h) != nil {
						fail(fmt.Sprintf("create: %d %v %s", code, err, raw))
						continue
					}
					code, raw, err = post(client, "PUT", s.api+"/api/v1/hostnames/"+h.ID, key, map[string]string{"ip": fmt.Sprintf("23.65.%d.%d", c, i)})
					if err != nil || code != 200 {
						fail(fmt.Sprintf("update: %d %v %s", code, err, raw))
						continue
					}
					mu.Lock()
					names = append(names, h.Hostname)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(failed) > 0 {
			var out []string
			for what, n := range failed {
				out = append(out, fmt.Sprintf("%d× %s", n, what))
			}
			sort.Strings(out)
			t.Fatalf("%d of %d writes refused:\n%s", callers*each-len(names), callers*each, strings.Join(out, "\n"))
		}
		sort.Strings(names)
		for _, name := range names[:16] {
			if r := s.query(name, dns.TypeA, "udp"); len(r.Answer) != 1 || !strings.HasPrefix(r.Answer[0].(*dns.A).A.String(), "23.65.") {
				t.Fatalf("%s after the update answers %v", name, r.Answer)
			}
		}
	})
}
