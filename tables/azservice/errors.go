package azservice

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/unified-data/gotables/abstractions"
)

// errNoBlobs is returned by every Blobs method of a Service that has no blob client. It
// matches abstractions.ErrBlobOffloadNotConfigured.
var errNoBlobs = fmt.Errorf("azservice: no blob service is configured (the connection string names no blob endpoint, or New was given a nil *azblob.Client): %w",
	abstractions.ErrBlobOffloadNotConfigured)

// errEmptyPartitionKey refuses what the SDK refuses: it cannot address a row whose
// PartitionKey is empty (the generated request builders reject an empty key), although the
// service allows one.
var errEmptyPartitionKey = fmt.Errorf("azservice: the Azure SDK cannot address a row with an empty PartitionKey by URL (replace, merge, upsert, delete): %w",
	abstractions.ErrNotSupported)

// mapError turns an SDK failure into the contract's errors: an *azcore.ResponseError
// becomes an *abstractions.StatusError that keeps it in Err, and a failure caused by the
// end of ctx becomes ctx's error. Anything else is returned wrapped with op.
func mapError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return statusError(re)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("azservice: %s: %w", op, err)
		}
		return fmt.Errorf("azservice: %s: %w (%v)", op, ctxErr, err)
	}
	return fmt.Errorf("azservice: %s: %w", op, err)
}

// statusError converts a service failure, reading the message (and the code, when the SDK
// found none) from the response body.
func statusError(re *azcore.ResponseError) *abstractions.StatusError {
	se := &abstractions.StatusError{StatusCode: re.StatusCode, ErrorCode: re.ErrorCode, Err: re}
	if re.RawResponse != nil {
		if body, err := runtime.Payload(re.RawResponse); err == nil {
			code, msg := parseErrorBody(body)
			if se.ErrorCode == "" {
				se.ErrorCode = code
			}
			se.Message = msg
		}
	}
	return se
}

// parseErrorBody reads the code and message of an OData JSON error
// ({"odata.error":{"code":…,"message":{"value":…}}}) or a storage XML error
// (<Error><Code>…</Code><Message>…</Message></Error>). The message loses the
// RequestId/Time lines the service appends, which differ on every call.
func parseErrorBody(body []byte) (code, message string) {
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
		var e struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(body, &e) != nil {
			return "", ""
		}
		return e.Code, trimTrailer(e.Message)
	}
	return "", ""
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

// notFound is the error of a point read that found no row, shaped like the one GetEntity
// reports (the projected read goes through a query, which answers 200 with no rows).
func notFound() *abstractions.StatusError {
	return &abstractions.StatusError{
		StatusCode: http.StatusNotFound,
		ErrorCode:  "ResourceNotFound",
		Message:    "The specified resource does not exist.",
	}
}
