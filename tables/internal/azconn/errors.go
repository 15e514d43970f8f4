// Package azconn holds what the Azure adapters of the table and the blob service share: the
// connection-string parser, the shared HTTP transport of accounts that bring none, and the
// mapping of SDK failures to the library's errors, with the secrets a URL or a connection
// string carries kept out of every message. A connection string it cannot use is refused
// with abstractions.ErrInvalidArgument, naming the setting and never its value.
package azconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/unified-data/gotables/abstractions"
)

// MapError turns an SDK failure into the contract's errors: an *azcore.ResponseError
// becomes an *abstractions.StatusError that keeps it in Err, and a failure caused by the
// end of ctx becomes ctx's error. Anything else is returned wrapped with op. A transport
// failure loses its URL's query first: with a shared access signature the query holds the
// signature, which must never reach an error message or a log.
func MapError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return StatusError(re)
	}
	err = WithoutQuery(err)
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("%s: %w", op, err)
		}
		return fmt.Errorf("%s: %w (%v)", op, ctxErr, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// WithoutQuery returns err unchanged unless its chain holds a *url.Error whose URL has a
// query. It then returns an error with the same text, minus that query, which unwraps to a
// copy of the *url.Error without the query (and so still to its cause, e.g. the context's
// error or the *net.OpError). The layers between err and the *url.Error are dropped: they
// would hand out the original URL to anyone unwrapping them.
func WithoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	clean := &url.Error{Op: ue.Op, URL: stripQuery(ue.URL), Err: ue.Err}
	if clean.URL == ue.URL {
		return err
	}
	if err == error(ue) {
		return clean
	}
	msg := strings.ReplaceAll(err.Error(), ue.Error(), clean.Error())
	msg = strings.ReplaceAll(msg, ue.URL, clean.URL) // in case a layer quoted the URL itself
	return &redactedError{msg: msg, err: clean}
}

// stripQuery removes the query and fragment of a URL; a URL that does not parse loses
// everything from its first '?' or '#'.
func stripQuery(s string) string {
	if u, err := url.Parse(s); err == nil {
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		return u.String()
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i]
	}
	return s
}

// redactedError is an error chain whose text and inner *url.Error have lost a secret.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// StatusError converts a service failure, reading the message (and the code, when the SDK
// found none) from the response body.
func StatusError(re *azcore.ResponseError) *abstractions.StatusError {
	se := &abstractions.StatusError{StatusCode: re.StatusCode, ErrorCode: re.ErrorCode, Err: re}
	if re.RawResponse != nil {
		if body, err := runtime.Payload(re.RawResponse); err == nil {
			code, msg := ParseErrorBody(body)
			if se.ErrorCode == "" {
				se.ErrorCode = code
			}
			se.Message = msg
		}
	}
	return se
}

// ParseErrorBody reads the code and message of an OData JSON error
// ({"odata.error":{"code":…,"message":{"value":…}}}) or a storage XML error
// (<Error><Code>…</Code><Message>…</Message></Error>). The message loses the
// RequestId/Time lines the service appends, which differ on every call.
func ParseErrorBody(body []byte) (code, message string) {
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\ufeff")))
	if len(body) == 0 {
		return "", ""
	}
	switch body[0] {
	case '{':
		var e struct {
			OData *odataError `json:"odata.error"`
			Error *odataError `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil {
			return "", ""
		}
		oe := e.OData
		if oe == nil {
			oe = e.Error
		}
		if oe == nil {
			return "", ""
		}
		var msg string
		if len(oe.Message) > 0 && oe.Message[0] == '"' {
			_ = json.Unmarshal(oe.Message, &msg)
		} else {
			var m struct {
				Value string `json:"value"`
			}
			_ = json.Unmarshal(oe.Message, &m)
			msg = m.Value
		}
		return oe.Code, trimTrailer(msg)
	case '<':
		code, ok := xmlElement(body, "Code")
		if !ok {
			return "", ""
		}
		msg, _ := xmlElement(body, "Message")
		return code, trimTrailer(msg)
	}
	return "", ""
}

// xmlEntities decodes the entities a storage error's text may hold.
var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&")

// xmlElement returns the text of the first <name>…</name> element of a storage error body
// (<Error><Code>…</Code><Message>…</Message></Error>), its entities decoded. The service's
// error bodies are this flat shape; reading them by hand keeps encoding/xml's reflection out
// of the table path, which needs it for nothing else.
func xmlElement(body []byte, name string) (string, bool) {
	open, end := []byte("<"+name+">"), []byte("</"+name+">")
	i := bytes.Index(body, open)
	if i < 0 {
		return "", false
	}
	rest := body[i+len(open):]
	j := bytes.Index(rest, end)
	if j < 0 {
		return "", false
	}
	return xmlEntities.Replace(string(rest[:j])), true
}

type odataError struct {
	Code    string          `json:"code"`
	Message json.RawMessage `json:"message"`
}

// trimTrailer removes the "\nRequestId:…\nTime:…" lines from a service message.
func trimTrailer(msg string) string {
	if i := strings.Index(msg, "\nRequestId:"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// Deref returns *p, or the zero value for a nil p: the SDK's responses hold optional
// values as pointers.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
