package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
)

// A TSIG key a bearer key issues never outlives it, over HTTP and DNS:
// POSTs to /api/v1/tsig-keys racing the issuer's revocation each answer
// 201 or 401, and once the revocation has answered, no key that answered
// 201 is listed or signs an UPDATE.
func TestTSIGIssuerRevokedRacingCreates(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, _ := spawn(t, updateOptions(t, d, 2))
			const rounds, creates = 4, 8
			made, refused := 0, 0
			for round := range rounds {
				// A team each round: 8 creates are within its 10 keys and
				// 20 issues an hour.
				domain := fmt.Sprintf("r%d.example.net", round)
				team, _ := s.team(t, domain)
				r := s.must(201, "POST", "/api/admin/accounts/"+team+"/keys", s.admin, map[string]any{"name": "issuer"})
				issuer, token := r.str("id"), r.str("key")

				var wg sync.WaitGroup
				begin := make(chan struct{})
				answers := make([]apiAnswer, creates)
				for i := range creates {
					wg.Go(func() {
						<-begin
						answers[i] = s.send("POST", "/api/v1/tsig-keys", token, map[string]any{"name": fmt.Sprint(i)})
					})
				}
				var revoked apiAnswer
				wg.Go(func() {
					<-begin
					// Land among the creates' commits, not always first: a
					// create answers only once this node's DNS servers verify
					// its key (a reload, 1 s apart; 10 s when it was revoked
					// first), too late to wait for.
					time.Sleep(time.Duration(round) * 2 * time.Millisecond)
					revoked = s.send("DELETE", "/api/admin/keys/"+issuer, s.admin, nil)
				})
				close(begin)
				wg.Wait()
				if revoked.err != nil || revoked.status != 200 {
					t.Fatalf("round %d: revoking the issuer: %d %v %s", round, revoked.status, revoked.err, revoked.raw)
				}
				var keys []tsigKey
				for i, a := range answers {
					switch {
					case a.err != nil:
						t.Fatalf("round %d, create %d: %v", round, i, a.err)
					case a.status == 201:
						keys = append(keys, tsigKey{id: a.str("id"), name: a.str("key_name"), secret: a.str("secret")})
					case a.status == 401 && a.str("code") == "UNAUTHORIZED":
						refused++
					default:
						t.Fatalf("round %d, create %d: %d %s", round, i, a.status, a.raw)
					}
				}
				made += len(keys)

				// Every key of the team was issued by the revoked key.
				if l := s.must(200, "GET", "/api/admin/accounts/"+team+"/tsig-keys", s.admin, nil); len(l.body["tsig_keys"].([]any)) != 0 {
					t.Fatalf("round %d: TSIG keys live after their issuer's revocation: %s", round, l.raw)
				}
				for _, k := range keys {
					s.refusedSigned(k, fmt.Sprintf("zone %s\nupdate add box.%s 60 A 198.41.0.4", domain, domain))
				}
			}
			t.Logf("%d rounds: %d creates answered 201 (each revoked with its issuer), %d answered 401", rounds, made, refused)
		})
	}
}

// A key that only reads issues no TSIG key (a key for DNS UPDATE, each new
// one a reload of every node and one of the team's issues an hour): 403,
// and no row. It may still list them.
func TestTSIGIssuerReadOnly(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, _ := spawn(t, updateOptions(t, d, 2))
			team, _ := s.team(t, "ro.example.net")
			reader := s.key(t, team, []map[string]any{{"scope": "hostnames:read"}})
			for _, body := range []map[string]any{nil, {"scopes": []map[string]any{{"scope": "hostnames:read"}}}} {
				r := s.must(403, "POST", "/api/v1/tsig-keys", reader, body)
				if r.str("code") != "FORBIDDEN" || !strings.Contains(r.str("error"), "hostnames:write") {
					t.Errorf("a read-only key issuing a TSIG key (%v): %s", body, r.raw)
				}
			}
			if l := s.must(200, "GET", "/api/admin/accounts/"+team+"/tsig-keys", s.admin, nil); len(l.body["tsig_keys"].([]any)) != 0 {
				t.Fatalf("rows after the refusals: %s", l.raw)
			}
			s.must(200, "GET", "/api/v1/tsig-keys", reader, nil)
			// A key that writes issues one.
			writer := s.key(t, team, []map[string]any{{"scope": "dns01:write"}})
			s.tsig("/api/v1/tsig-keys", writer, nil)
		})
	}
}

// apiAnswer is an HTTP answer read off the test's goroutine (where the
// harness's Fatal may not be called).
type apiAnswer struct {
	status int
	body   map[string]any
	raw    []byte
	err    error
}

func (a apiAnswer) str(key string) string {
	v, _ := a.body[key].(string)
	return v
}

// send is do for a goroutine: errors are returned, not fatal.
func (s *server) send(method, path, token string, body any) apiAnswer {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return apiAnswer{err: err}
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.api+path, rd)
	if err != nil {
		return apiAnswer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return apiAnswer{err: err}
	}
	defer resp.Body.Close()
	a := apiAnswer{status: resp.StatusCode}
	if a.raw, a.err = io.ReadAll(resp.Body); a.err == nil && len(a.raw) > 0 {
		a.err = json.Unmarshal(a.raw, &a.body)
	}
	return a
}

// refusedSigned fails the test if script signed with k is applied, or is
// never answered NOTAUTH (an unknown key). It sends again when nsupdate
// got no answer: a new key's reload of the DNS servers closes a TCP
// connection they had accepted and not read (docs/dns-update.md).
func (s *server) refusedSigned(k tsigKey, script string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, ok := s.nsupdate(k, script)
		switch {
		case ok:
			s.t.Fatalf("TSIG key %s of a revoked issuer signed an UPDATE that was applied:\n%s", k.id, out)
		case strings.Contains(out, "NOTAUTH"):
			return
		case time.Now().After(deadline):
			s.t.Fatalf("TSIG key %s of a revoked issuer: nsupdate never answered NOTAUTH:\n%s", k.id, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
