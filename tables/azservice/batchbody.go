package azservice

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables/service"
)

// The body of a transaction.
//
// A Submit Transaction request is a multipart/mixed batch holding one change set, itself a
// multipart/mixed part whose parts are the actions as HTTP requests: a request line with
// the row's URL, a few headers, and the entity's JSON. Transact encodes the entities once
// (appendEntity, as Write does) and batchBody frames them as the SDK would: the same
// request lines, methods and headers, the same URLs (the keys of an addressed row
// percent-encoded, with the query of the client's endpoint, such as a shared access
// signature, and $format on inserts and deletes). Its inner requests carry their
// DataServiceVersion, which the SDK leaves empty.

type batchBodyKey struct{}

// batchBody is a transaction's actions with their entities encoded, on its way to the
// batchBodies policy.
type batchBody struct {
	table   string
	actions []service.Action
	// entities holds the actions' entity bodies one after another; ends[i] is where the
	// body of action i ends (a delete's is empty).
	entities []byte
	ends     []int
	// sent reports that the policy put the body in place.
	sent bool
}

// withBatchBody returns a context whose Submit Transaction request batchBodies gives b's
// body.
func withBatchBody(ctx context.Context, b *batchBody) context.Context {
	return context.WithValue(ctx, batchBodyKey{}, b)
}

// batchBodies replaces the body of a Submit Transaction request whose context carries a
// batchBody. It is a per-call policy, so it runs once for a call however often the retry
// policy after it sends the request again (the body is rewound, as any body is). Every
// other request passes unchanged.
type batchBodies struct{}

func (batchBodies) Do(req *policy.Request) (*http.Response, error) {
	b, _ := req.Raw().Context().Value(batchBodyKey{}).(*batchBody)
	if b == nil || req.Raw().Method != http.MethodPost || !strings.HasSuffix(req.Raw().URL.Path, "/$batch") {
		return req.Next()
	}
	body, contentType := b.compose(req.Raw().URL)
	if err := setMemBody(req, body, contentType); err != nil {
		return nil, err
	}
	b.sent = true
	return req.Next()
}

// Header lines of the inner requests (the row client's headers, in pipeline.go, are the
// same values as header maps).
const (
	lineAcceptMinimal = "Accept: application/json;odata=minimalmetadata\r\n"
	lineAcceptJSON    = "Accept: application/json\r\n"
	lineJSONContent   = "Content-Type: application/json\r\n"
	lineDataService   = "DataServiceVersion: 3.0\r\n"
	lineNoEcho        = "Prefer: return-no-content\r\n"
	formatMinimal     = "application/json;odata=minimalmetadata"
)

// compose returns the request body of the transaction sent to batchURL (the endpoint's
// $batch URL), and its content type. The body is allocated for this request alone: the
// transport may still read it after the call has returned.
func (b *batchBody) compose(batchURL *url.URL) ([]byte, string) {
	batch, changeset := "batch_"+boundaryID(), "changeset_"+boundaryID()
	prefix := batchURL.Scheme + "://" + batchURL.Host + strings.TrimSuffix(batchURL.EscapedPath(), "$batch") + url.PathEscape(b.table)
	query := batchURL.Query()
	plain := ""
	if len(query) > 0 {
		plain = "?" + query.Encode()
	}
	query.Set("$format", formatMinimal)
	formatted := "?" + query.Encode()
	cosmos := isCosmosEndpoint(batchURL.String())

	out := make([]byte, 0, len(b.entities)+len(b.actions)*(320+len(prefix)+len(plain))+256)
	out = append(out, "--"+batch+"\r\nContent-Type: multipart/mixed; boundary="+changeset+"\r\n\r\n"...)
	start := 0
	for i := range b.actions {
		a := &b.actions[i]
		entity := b.entities[start:b.ends[i]]
		start = b.ends[i]
		out = append(out, "--"+changeset+"\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n"...)
		method, merge := "PUT", false
		switch a.Op {
		case service.OpInsert:
			method = "POST"
		case service.OpMerge, service.OpUpsertMerge:
			method, merge = "PATCH", true
			if cosmos {
				method = "POST" // the SDK's rewrite for the Cosmos DB table endpoint
			}
		case service.OpDelete:
			method = "DELETE"
		}
		out = append(out, method...)
		out = append(out, ' ')
		out = append(out, prefix...)
		switch a.Op {
		case service.OpInsert:
			out = append(out, formatted...)
		default:
			out = append(out, "(PartitionKey='"...)
			out = append(out, url.PathEscape(doubleQuotes(a.Row.PartitionKey))...)
			out = append(out, "',RowKey='"...)
			out = append(out, url.PathEscape(doubleQuotes(a.Row.RowKey))...)
			out = append(out, "')"...)
			if a.Op == service.OpDelete {
				out = append(out, formatted...)
			} else {
				out = append(out, plain...)
			}
		}
		out = append(out, " HTTP/1.1\r\n"...)
		switch a.Op {
		case service.OpInsert, service.OpDelete:
			out = append(out, lineAcceptMinimal...)
		default:
			out = append(out, lineAcceptJSON...)
		}
		if a.Op != service.OpDelete {
			out = append(out, "Content-Length: "...)
			out = strconv.AppendInt(out, int64(len(entity)), 10)
			out = append(out, "\r\n"+lineJSONContent...)
		}
		out = append(out, lineDataService...)
		switch a.Op {
		case service.OpReplace, service.OpMerge, service.OpDelete:
			tag := a.IfMatch
			if tag == "" {
				tag = service.ETagAny
			}
			out = append(out, "If-Match: "...)
			out = append(out, tag...)
			out = append(out, "\r\n"...)
		case service.OpInsert:
			out = append(out, lineNoEcho...)
		}
		if merge && cosmos {
			out = append(out, "X-HTTP-Method: MERGE\r\n"...)
		}
		out = append(out, "\r\n"...)
		out = append(out, entity...)
		out = append(out, "\r\n"...)
	}
	out = append(out, "--"+changeset+"--\r\n\r\n--"+batch+"--\r\n"...)
	return out, "multipart/mixed; boundary=" + batch
}

// boundaryID returns 32 random hexadecimal digits in the shape of a UUID, for a multipart
// boundary that no entity body contains.
func boundaryID() string {
	hi, lo := rand.Uint64(), rand.Uint64()
	h := fmt.Sprintf("%016x%016x", hi, lo)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// parseBatchETags returns the ETag header of each inner response of a batch response body,
// in order ("" where a response has none, such as a delete's), and whether an inner
// response has a status of 400 or more (a failed action, which parseBatchFailure reads).
// When the body does not hold exactly n inner responses, the tags are nil: the versions
// could not be matched to the actions.
func parseBatchETags(body []byte, n int) (tags []string, failed bool) {
	tags = make([]string, 0, n)
	inHeaders := false
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case bytes.HasPrefix(line, []byte("HTTP/1.")):
			tags = append(tags, "")
			inHeaders = true
			// "HTTP/1.1 412 …": the status's first digit.
			failed = failed || len(line) > 10 && line[8] == ' ' && (line[9] == '4' || line[9] == '5')
		case !inHeaders:
		case len(line) == 0:
			inHeaders = false
		default:
			name, value, ok := bytes.Cut(line, []byte(":"))
			if ok && strings.EqualFold(string(bytes.TrimSpace(name)), "ETag") {
				tags[len(tags)-1] = string(bytes.TrimSpace(value))
			}
		}
	}
	if len(tags) != n {
		return nil, failed
	}
	return tags, failed
}
