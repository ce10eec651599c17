package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostmint/hostmint/apierror"
)

// Request bodies: one JSON value of at most MaxBody, and a 400 that names
// what is wrong with it.

// decode reads the JSON object body into v: unknown fields, trailing data,
// wrong types and bodies over MaxBody are all 400 with a message naming the
// problem.
func decode(r *http.Request, v any) error { return readJSON(r, v, true) }

// readJSON reads the whole body (at most MaxBody) and decodes one JSON
// value from it; strict refuses fields v does not have.
func readJSON(r *http.Request, v any, strict bool) error {
	body, err := io.ReadAll(r.Body)
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return apierror.BadRequest("request body is larger than 4KB")
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		// The http.Server's ReadTimeout; the error would name our sockets.
		return apierror.BadRequest("request body was not received in time")
	}
	if err != nil {
		return apierror.BadRequest("request body could not be read: %v", err)
	}
	if !utf8.Valid(body) {
		// JSON is UTF-8 (RFC 8259); the decoder would silently store U+FFFD
		// for what the caller sent.
		return apierror.BadRequest("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return apierror.BadRequest("request body must hold one JSON object and nothing after it")
	}
	if hasNUL(body) {
		return apierror.BadRequest("request body must not hold the character U+0000 (\\u0000)")
	}
	return nil
}

// hasNUL reports whether a string in the JSON body, key or value, holds
// U+0000. No field of the API has a use for it, and neither database takes
// it: bun writes values into the SQL text, where SQLite reads NUL as its
// end, and PostgreSQL refuses it in text.
func hasNUL(body []byte) bool {
	// JSON carries NUL only as this escape (a raw one is a syntax error);
	// tokens tell it from an escaped backslash followed by "u0000".
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

func jsonError(err error) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		timeErr   *time.ParseError
	)
	switch {
	case errors.Is(err, io.EOF):
		return apierror.BadRequest("request body is empty; send a JSON object")
	case errors.As(err, &syntaxErr):
		return apierror.BadRequest("request body is not valid JSON: %v", err)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apierror.BadRequest("request body must be a JSON object")
		}
		if k := typeErr.Type.Kind(); strings.HasPrefix(typeErr.Value, "number") && k >= reflect.Int && k <= reflect.Uint64 {
			// A fraction, or a number too big for the field.
			return apierror.BadRequest("field %s must be an integer of at most %d bits, got %s",
				typeErr.Field, typeErr.Type.Bits(), strings.TrimPrefix(typeErr.Value, "number "))
		}
		return apierror.BadRequest("field %s must be of type %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()))
	case errors.As(err, &timeErr):
		return apierror.BadRequest("a date-time field is not RFC 3339 (2006-01-02T15:04:05Z): %q", timeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return apierror.BadRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return apierror.BadRequest("request body is not valid JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return "number"
}
