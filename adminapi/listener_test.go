package adminapi

import (
	"testing"
)

// refusal knows net/http's own refusals (server.go, conn.serve) by their
// exact framing, and nothing else: a handler's answer is never rewritten.
func TestRefusal(t *testing.T) {
	t.Parallel()
	const plain = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	tests := []struct {
		name   string
		wire   string
		status int // 0: not a refusal
		detail string
	}{
		{"431", "HTTP/1.1 431 Request Header Fields Too Large" + plain + "431 Request Header Fields Too Large", 431, ""},
		{"400 with detail", "HTTP/1.1 400 Bad Request: invalid header name" + plain + "400 Bad Request: invalid header name", 400, "invalid header name"},
		{"400", "HTTP/1.1 400 Bad Request" + plain + "400 Bad Request", 400, ""},
		{"501", "HTTP/1.1 501 Not Implemented" + plain + "Unsupported transfer encoding", 501, ""},
		{"505", "HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version" + plain +
			"505 HTTP Version Not Supported: unsupported protocol version", 505, "unsupported protocol version"},
		{"417", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Sun, 22 Nov 2026 02:00:00 GMT\r\nContent-Length: 0\r\n\r\n", 417, ""},
		{"a handler's 400", "HTTP/1.1 400 Bad Request\r\nCache-Control: no-store\r\nContent-Type: application/json\r\n" +
			"Date: Sun, 22 Nov 2026 02:00:00 GMT\r\nContent-Length: 2\r\n\r\n{}", 0, ""},
		{"a handler's text", "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
			"Date: Sun, 22 Nov 2026 02:00:00 GMT\r\n\r\nhi", 0, ""},
		{"a body", `{"error":"HTTP/1.1 431 x","code":"BAD_REQUEST"}`, 0, ""},
		{"a body starting like a status", "HTTP/1.1 417 Expectation Failed (in a TXT record)", 0, ""},
		{"short", "HTTP/1.1 4", 0, ""},
	}
	for _, tc := range tests {
		status, detail, ok := refusal([]byte(tc.wire))
		if ok != (tc.status != 0) || status != tc.status && tc.status != 0 || detail != tc.detail {
			t.Errorf("%s: refusal = %d, %q, %t; want %d, %q", tc.name, status, detail, ok, tc.status, tc.detail)
		}
	}
}
