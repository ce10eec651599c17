// Package client calls Hostmint's admin API (and its health endpoint)
// over HTTP: what the `hostmint` command and the end-to-end tests use. It
// holds no rule of the service; every answer is the server's. A test
// keeps its calls in step with the server's route table.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is one server and the admin token it takes.
type Client struct {
	Server string // base URL, e.g. http://127.0.0.1:8080
	Token  string
	HTTP   *http.Client
	// Answer, when set, sees the body of every answer as it came, for
	// callers that print the API's JSON itself.
	Answer func(body []byte)
}

// New is a Client with a timeout suited to a person at a shell.
func New(server, token string) *Client {
	return &Client{Server: strings.TrimRight(server, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Error is the API's refusal: its status and its {error, code}.
type Error struct {
	Status  int
	Message string `json:"error"`
	Code    string `json:"code"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status) }

// ErrUnreachable wraps a failure to reach the server at all.
var ErrUnreachable = errors.New("cannot reach the server")

// call sends method to pattern with its {parameters} filled from args in
// order, query and the JSON of in (nil: no body), and decodes the answer
// into out (nil: ignored).
func (c *Client) call(ctx context.Context, method, pattern string, args []string, query url.Values, in, out any) error {
	path := pattern
	for _, a := range args {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		if i < 0 || j < i {
			return fmt.Errorf("client: %s takes fewer parameters", pattern)
		}
		path = path[:i] + url.PathEscape(a) + path[j+1:]
	}
	if strings.Contains(path, "{") {
		return fmt.Errorf("client: %s takes more parameters", pattern)
	}
	u := c.Server + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Server, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("client: reading the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Code == "" {
			e.Message, e.Code = strings.TrimSpace(string(raw)), http.StatusText(resp.StatusCode)
		}
		return e
	}
	if c.Answer != nil {
		c.Answer(raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("client: the answer to %s %s is not what this client knows: %w", method, path, err)
	}
	return nil
}

// values is a query of the non-empty pairs k1, v1, k2, v2...
func values(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
