package azservice

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// The SDK decodes every entity it reads into maps and re-encodes it, which this adapter does
// not use: it decodes the service's own bytes (see decodeEntityList, decodeEntityBody). For
// the clients this package builds, bodyTap takes a successful read's body before the SDK
// sees it and hands the SDK an empty one instead, so the entities are decoded once. The
// SDK still reads the continuation and the ETag from the headers, which are left alone.

type tapKey struct{}

// tap receives the body of one read's response.
type tap struct {
	body  []byte
	taken bool
}

// withTap returns a context whose read response bodyTap stores in t.
func withTap(ctx context.Context, t *tap) context.Context {
	return context.WithValue(ctx, tapKey{}, t)
}

const emptyPage = `{"value":[]}`

type bodyTap struct{}

func (bodyTap) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	t, _ := req.Raw().Context().Value(tapKey{}).(*tap)
	if t == nil {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.body, t.taken = body, true
	resp.Body = io.NopCloser(strings.NewReader(emptyPage))
	resp.ContentLength = int64(len(emptyPage))
	resp.Header.Del("Content-Length")
	return resp, nil
}
