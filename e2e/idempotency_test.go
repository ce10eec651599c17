package e2e

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Idempotency-Key: a create retried with the same key and body answers
// the first answer and writes nothing; the same key with another body is
// 409; retries racing each other, or sent to another node of the same
// database, still create once.

func idem(key string) map[string]string { return map[string]string{"Idempotency-Key": key} }

func TestIdempotentCreate(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("business")
		body := map[string]any{"ip": "198.41.0.20"}
		first := s.doWith("POST", "/api/v1/hostnames", key, body, idem("create-1"))
		if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first create: %d %s (replayed %q)", first.status, first.raw, first.header.Get("Idempotent-Replayed"))
		}
		again := s.doWith("POST", "/api/v1/hostnames", key, body, idem("create-1"))
		if again.status != 201 || string(again.raw) != string(first.raw) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry: %d %s (replayed %q); want the first answer %s", again.status, again.raw, again.header.Get("Idempotent-Replayed"), first.raw)
		}
		other := s.doWith("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.21"}, idem("create-1"))
		if other.status != 409 || other.str("code") != "CONFLICT" {
			t.Errorf("the key with another body: %d %s, want 409 CONFLICT", other.status, other.raw)
		}
		for _, bad := range []string{" ", "a b", strings.Repeat("x", 256)} {
			if r := s.doWith("POST", "/api/v1/hostnames", key, body, idem(bad)); r.status != 400 {
				t.Errorf("key %q: %d %s, want 400", bad, r.status, r.raw)
			}
		}
		if n := len(s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any)); n != 1 {
			t.Errorf("%d hostnames after a create and its retries, want 1", n)
		}
		s.resolves(first.str("hostname"), dns.TypeA, "198.41.0.20")

		// Retries racing each other: one create, one answer.
		var wg sync.WaitGroup
		answers := make([]response, 12)
		for i := range answers {
			wg.Go(func() {
				answers[i] = s.doWith("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.22"}, idem("race"))
			})
		}
		wg.Wait()
		for _, a := range answers {
			if a.status != 201 || a.str("id") != answers[0].str("id") {
				t.Errorf("racing retry: %d %s, want 201 with id %s", a.status, a.raw, answers[0].str("id"))
			}
		}
		if n := len(s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any)); n != 2 {
			t.Errorf("%d hostnames after 12 racing retries of one create, want 2 in all", n)
		}

		// A key whose answer holds a secret: without an encryption key it
		// is not kept, and the retry is refused rather than minting again.
		id := s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "k", "plan": "free"}).str("id")
		k := s.doWith("POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"name": "ci"}, idem("key-1"))
		if k.status != 201 {
			t.Fatalf("key create: %d %s", k.status, k.raw)
		}
		if r := s.doWith("POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"name": "ci"}, idem("key-1")); r.status != 409 {
			t.Errorf("retry of a key create without an encryption key: %d %s, want 409", r.status, r.raw)
		}
		if n := len(s.must(200, "GET", "/api/admin/accounts/"+id+"/keys", s.admin, nil).body["keys"].([]any)); n != 1 {
			t.Errorf("%d keys after a create and its retry, want 1", n)
		}
	})
}

// With an encryption key, a retried create whose answer holds a secret
// (a TSIG key) answers the same secret; a retried record create answers
// the same record; on two nodes of one database the retry may go to
// either.
func TestIdempotentSecretsAcrossNodes(t *testing.T) {
	keyLine := recKeyLine(t)
	a := start(t, options{profile: 2, dialect: storage.Postgres, extra: []string{keyLine}})
	b := start(t, options{profile: 2, dialect: storage.Postgres, dsn: a.dsn, dir: a.dir, extra: []string{keyLine}})
	_, key := a.team(t, "idem.example.net")
	hid, _ := a.recHost(t, key, "web", "198.41.0.30")

	tsig := map[string]any{"name": "ci"}
	first := a.doWith("POST", "/api/v1/tsig-keys", key, tsig, idem("tsig-1"))
	if first.status != 201 || first.str("secret") == "" {
		t.Fatalf("TSIG key create: %d %s", first.status, first.raw)
	}
	again := b.doWith("POST", "/api/v1/tsig-keys", key, tsig, idem("tsig-1"))
	if again.status != 201 || again.str("secret") != first.str("secret") || again.str("id") != first.str("id") {
		t.Errorf("retry on the other node: %d %s, want the first answer", again.status, again.raw)
	}
	if n := len(a.must(200, "GET", "/api/v1/tsig-keys", key, nil).body["tsig_keys"].([]any)); n != 1 {
		t.Errorf("%d TSIG keys, want 1", n)
	}

	rec := map[string]any{"type": "TXT", "text": "hello"}
	r1 := a.doWith("POST", recPath(hid), key, rec, idem("rec-1"))
	r2 := b.doWith("POST", recPath(hid), key, rec, idem("rec-1"))
	if r1.status != 201 || r2.status != 201 || r1.str("id") != r2.str("id") {
		t.Errorf("record create and its retry: %d %s / %d %s", r1.status, r1.raw, r2.status, r2.raw)
	}
	if n := len(a.recList(t, key, hid)); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}

// A client whose connection breaks after it sent a create (the answer
// lost, the create committed or not) retries with the same key: whichever
// happened, it ends with one hostname per create.
func TestIdempotentRetryAfterBrokenConnection(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("business")
		const creates = 20
		for i := range creates {
			k := fmt.Sprint("cut-", i)
			body := fmt.Sprintf(`{"ip":"198.41.1.%d"}`, i)
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "POST /api/v1/hostnames HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Idempotency-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, k, len(body), body)
			time.Sleep(time.Duration(i%5) * time.Millisecond) // cut at different moments of the create
			conn.Close()
			if r := s.doWith("POST", "/api/v1/hostnames", key, body, idem(k)); r.status != 201 {
				t.Fatalf("retry %d: %d %s", i, r.status, r.raw)
			}
		}
		if n := len(s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any)); n != creates {
			t.Errorf("%d hostnames after %d creates, each cut off and retried, want %d", n, creates, creates)
		}
	})
}
