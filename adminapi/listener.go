package adminapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/apierror"
)

// MaxHeaderBytes caps a request's header block (request line and header
// lines); past it, and the 4KB net/http allows beyond, the answer is 431.
const MaxHeaderBytes = 16 << 10

// Listener wraps the API's listener so that the requests net/http refuses
// before any handler runs get the spec's {error, code} body like every
// other error, instead of net/http's plain text: a header block over
// MaxHeaderBytes (431), a malformed request line, header line or
// Content-Length, a control character in a header value (400), an
// Expect other than 100-continue (417), an unknown transfer coding (501)
// or protocol version (505). The status is net/http's; only the body (and
// its Content-Type) changes.
func Listener(ln net.Listener) net.Listener { return rejectListener{ln} }

type rejectListener struct{ net.Listener }

func (l rejectListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return rejectConn{c}, nil
}

type rejectConn struct{ net.Conn }

// CloseWrite lets net/http half-close the connection after a 431, as it
// does on a bare TCP connection, so that the client reads the answer before
// the unread rest of its request resets the connection.
func (c rejectConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainReject is what net/http writes (conn.serve, in one Write straight to
// the connection) between the status line and the body of a refusal. No
// answer a handler writes carries it: net/http puts a Date header after
// Content-Type and Connection in every answer it frames itself, and a body
// (JSON, with control characters escaped) holds no CR or LF.
var plainReject = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

func (c rejectConn) Write(p []byte) (int, error) {
	status, detail, ok := refusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(refusalAnswer(status, detail)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// refusal reads net/http's own refusal: its status and the detail net/http
// gives ("invalid header name"), if any.
func refusal(p []byte) (status int, detail string, ok bool) {
	const proto = "HTTP/1.1 "
	if len(p) < len(proto)+3 || string(p[:len(proto)]) != proto {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil {
		return 0, "", false
	}
	if status == http.StatusExpectationFailed && bytes.HasPrefix(p, []byte(proto+"417 Expectation Failed\r\n")) {
		// Framed like an answer (sendExpectationFailed), body empty; no
		// handler answers 417.
		return status, "", true
	}
	i := bytes.Index(p, plainReject)
	if i < 0 || bytes.IndexByte(p[:i], '\n') >= 0 {
		return 0, "", false
	}
	// "400 Bad Request: invalid header name", "431 Request Header Fields
	// Too Large", "Unsupported transfer encoding".
	body := string(p[i+len(plainReject):])
	if _, d, found := strings.Cut(body, ": "); found {
		detail = d
	}
	return status, detail, true
}

func refusalAnswer(status int, detail string) []byte {
	code, msg := apierror.CodeBadRequest, ""
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		msg = fmt.Sprintf("the request line and header fields are larger than %dKB", MaxHeaderBytes>>10)
	case http.StatusExpectationFailed:
		msg = "the only expectation this server meets is Expect: 100-continue"
	case http.StatusNotImplemented:
		code, msg = apierror.CodeNotImplemented, "unsupported Transfer-Encoding: only chunked is understood"
	case http.StatusHTTPVersionNotSupported:
		msg = "unsupported HTTP version: send HTTP/1.0 or HTTP/1.1"
	default:
		msg = "the request is not valid HTTP/1.1 (request line, header fields or Content-Length)"
		if detail != "" {
			msg = "the request is not valid HTTP/1.1: " + detail
		}
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	enc.Encode(errorBody{Error: msg, Code: code})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"+
		"Connection: close\r\nContent-Length: %d\r\n\r\n%s", status, http.StatusText(status), body.Len(), body.Bytes())
}
