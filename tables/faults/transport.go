package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Doer sends an HTTP request: an *http.Client, or any Azure SDK policy.Transporter.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Transport is an HTTP transport that injects its Plan's faults into the requests it
// carries and sends the others through the next transport. It implements the Azure SDK's
// policy.Transporter (set it as azcore.ClientOptions.Transport) and http.RoundTripper. The
// package does not import the SDK, so the in-memory backend's users do not link it.
//
// Stall and StallAfterSend wait for the request's context: give the calls a deadline.
type Transport struct {
	Plan
	next Doer
}

// NewTransport returns a Transport in front of next; nil means http.DefaultClient.
func NewTransport(next Doer) *Transport {
	if next == nil {
		next = http.DefaultClient
	}
	return &Transport{next: next}
}

var (
	_ Doer              = (*Transport)(nil)
	_ http.RoundTripper = (*Transport)(nil)
)

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) { return t.Do(req) }

// Do sends req, or fails it as its fault says.
func (t *Transport) Do(req *http.Request) (*http.Response, error) {
	switch f := t.take(classify(req)); f {
	case 0:
		return t.next.Do(req)
	case InternalError:
		return statusResponse(req, http.StatusInternalServerError, "InternalError", "The server encountered an internal error (injected)."), nil
	case ServerBusy:
		return statusResponse(req, http.StatusServiceUnavailable, "ServerBusy", "The server is busy (injected)."), nil
	case Stall:
		<-req.Context().Done()
		return nil, req.Context().Err()
	case StallAfterSend:
		// The service gets the whole request and applies it even when the call's deadline
		// passes while it is out: the fault is a lost answer, not a cancelled request.
		resp, err := t.next.Do(req.WithContext(context.WithoutCancel(req.Context())))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		<-req.Context().Done()
		return nil, req.Context().Err()
	case LoseResponse:
		resp, err := t.next.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, &Error{Fault: LoseResponse}
	case ResetMidRequest:
		return nil, &Error{Fault: ResetMidRequest}
	case ResetMidBody:
		resp, err := t.next.Do(req)
		if err != nil {
			return nil, err
		}
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			return nil, rerr
		}
		resp.Body = &brokenBody{r: bytes.NewReader(body[:len(body)/2])}
		return resp, nil
	default:
		return nil, fmt.Errorf("faults: unknown fault %v", f)
	}
}

// classify tells which kind of call a request of the table service is.
func classify(req *http.Request) Calls {
	path := req.URL.Path
	last := path[strings.LastIndexByte(path, '/')+1:]
	switch {
	case last == "$batch":
		return Transactions
	case strings.EqualFold(last, "Tables") || strings.HasPrefix(strings.ToLower(last), "tables("):
		return TableCalls
	case req.Method == http.MethodGet || req.Method == http.MethodHead:
		return Reads
	}
	return Writes
}

// statusResponse is an error answer of the table service.
func statusResponse(req *http.Request, status int, code, message string) *http.Response {
	body := fmt.Sprintf(`{"odata.error":{"code":%q,"message":{"lang":"en-US","value":%q}}}`, code, message)
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("x-ms-error-code", code)
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// brokenBody yields the first half of a body and then fails as a reset connection.
type brokenBody struct{ r *bytes.Reader }

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.r.Len() == 0 {
		return 0, &Error{Fault: ResetMidBody}
	}
	return b.r.Read(p)
}

func (b *brokenBody) Close() error { return nil }
