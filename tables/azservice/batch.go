package azservice

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Transact performs an entity-group transaction with one Submit Transaction call and
// returns the version each action wrote, read from the response's inner parts (the ETag
// of each insert, replace, merge and upsert; a delete reports none).
//
// Replace and Merge carry If-Match (the action's ETag, or * when empty): without it the
// service would upsert. The upserts carry none; Delete carries If-Match like Replace. The
// service checks the transaction rules (count, partition, duplicates, size); Transact
// checks none of them.
//
// The request body is written by this package, not by the SDK: the SDK decodes each
// entity into a map and encodes it again, which for a transaction of a few megabytes costs
// more time than the request itself. It is sent as single-row writes are; an account whose
// entity requests go through aztables (an Azure Cosmos DB endpoint) sends it through the
// SDK's transaction call, with the body put in place by a policy of this package. Either
// way the request goes through a pipeline of the client options (retries,
// authentication, logging, tracing).
//
// A failure of one action is a *service.TransactionError whose Err is the
// *abstractions.StatusError of that action, read from the multipart response (the SDK
// reports only the batch's 202). A failure of the whole request (such as 413
// RequestBodyTooLarge) is a plain *abstractions.StatusError. An empty transaction fails
// with 400 InvalidInput without a call, as the service rejects an empty change set.
//
// Transact refuses, without sending anything, what Write refuses.
func (s *Service) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	if len(actions) == 0 {
		return nil, &abstractions.StatusError{
			StatusCode: http.StatusBadRequest,
			ErrorCode:  "InvalidInput",
			Message:    "the transaction has no actions",
		}
	}
	bp := getBuf()
	defer putBuf(bp)
	buf := (*bp)[:0]
	if n := entitiesCap(actions); cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	ends := make([]int, len(actions))
	for i := range actions {
		a := &actions[i]
		pk, rk := a.Row.PartitionKey, a.Row.RowKey
		if a.Op < service.OpInsert || a.Op > service.OpDelete {
			return nil, fmt.Errorf("azservice: transaction action %d: unknown operation %v", i, a.Op)
		}
		if a.Op != service.OpInsert && pk == "" {
			return nil, fmt.Errorf("azservice: transaction action %d: %w", i, errEmptyPartitionKey)
		}
		if a.Op != service.OpDelete {
			var err error
			if buf, err = appendEntity(buf, pk, rk, a.Row.Properties); err != nil {
				*bp = buf
				return nil, fmt.Errorf("azservice: transaction action %d: %w", i, err)
			}
		}
		ends[i] = len(buf)
	}
	*bp = buf
	b := &batchBody{table: table, actions: actions, entities: buf, ends: ends}
	if s.rows != nil {
		return s.rows.transact(ctx, b)
	}

	// The SDK is handed one action standing for the transaction, which the batchBodies
	// policy replaces with b's body. Should the policy not run, this action is what the
	// service receives: a delete on condition of a version no row can have, which changes
	// nothing, and b.sent reports the mistake.
	var raw *http.Response
	_, err := s.tables.NewClient(table).SubmitTransaction(policy.WithCaptureResponse(withBatchBody(ctx, b), &raw), standIn, nil)
	if !b.sent && ctx.Err() == nil {
		return nil, errors.New("azservice: the transaction was not sent: the client lacks the batchBodies policy that the constructors of this package install")
	}
	if err == nil {
		var body []byte
		if raw != nil {
			body, _ = runtime.Payload(raw)
		}
		ws, _ := written(actions, body) // the SDK reported no failed action
		return ws, nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.StatusCode == http.StatusAccepted && re.RawResponse != nil {
			if body, perr := runtime.Payload(re.RawResponse); perr == nil {
				if te := parseBatchFailure(body, re); te != nil {
					return nil, te
				}
			}
		}
		return nil, azconn.StatusError(re)
	}
	if ctx.Err() == nil && raw != nil && raw.StatusCode == http.StatusAccepted {
		// Azurite answers a change set of more than 100 actions with a stray line before
		// the inner status line; the SDK then fails with "malformed HTTP response" and no
		// *azcore.ResponseError. The body still says what the service meant (400
		// InvalidInput, "0:The batch request operation exceeds the maximum 100 changes per
		// change set."), which is also what the real service reports, so read it.
		if body, perr := runtime.Payload(raw); perr == nil {
			if te := parseBatchFailure(body, err); te != nil {
				return nil, te
			}
		}
	}
	return nil, mapError(ctx, "transaction", err)
}

// written returns the versions a transaction's response body reports for its actions (none
// where it cannot tell them), and whether the body reports a failed action instead.
func written(actions []service.Action, body []byte) ([]service.Written, bool) {
	out := make([]service.Written, len(actions))
	tags, failed := parseBatchETags(body, len(actions))
	for i, tag := range tags {
		if tag != "" && actions[i].Op != service.OpDelete {
			out[i].ETag = tag
			out[i].Timestamp, _ = etagTime(tag)
		}
	}
	return out, failed
}

// entitiesCap is about the length of the actions' entity bodies, counted from the lengths
// of their values without reading them, so that a transaction of megabytes is encoded
// without growing its buffer many times. Escapes can make the bodies longer.
func entitiesCap(actions []service.Action) int {
	n := 0
	for i := range actions {
		a := &actions[i]
		if a.Op == service.OpDelete {
			continue
		}
		n += 48 + len(a.Row.PartitionKey) + len(a.Row.RowKey)
		for j := range a.Row.Properties {
			p := &a.Row.Properties[j]
			n += 2*len(p.Name) + 48
			switch p.Value.Kind() {
			case service.KindString:
				n += len(p.Value.Str())
			case service.KindBinary:
				n += base64.StdEncoding.EncodedLen(len(p.Value.Bytes()))
			}
		}
	}
	return n
}

// standIn is the action the SDK is given in place of a transaction's (see Transact).
var standIn = []aztables.TransactionAction{{
	ActionType: aztables.TransactionTypeDelete,
	Entity:     []byte(`{"PartitionKey":"-","RowKey":"-"}`),
	IfMatch:    to.Ptr(azcore.ETag(`W/"datetime'1601-01-01T00%3A00%3A00.0000000Z'"`)),
}}

// doubleQuotes escapes a key for an OData key literal in a URL.
func doubleQuotes(s string) string {
	if strings.IndexByte(s, '\'') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "'", "''")
}

// parseBatchFailure reads a failed batch's multipart response: the first inner response
// with a status of 400 or more, its OData error code, and its message, whose "N:" prefix
// names the failing action (0 when absent, which the service does for some one-action
// batches). It returns nil when the body holds no failed inner response.
//
// The parser reads lines rather than MIME parts so that it survives the malformed
// responses some emulator versions send.
func parseBatchFailure(body []byte, cause error) *service.TransactionError {
	lines := bytes.Split(body, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		line := bytes.TrimSuffix(lines[i], []byte("\r"))
		if !bytes.HasPrefix(line, []byte("HTTP/1.")) {
			continue
		}
		fields := strings.Fields(string(line))
		if len(fields) < 2 {
			continue
		}
		status, err := strconv.Atoi(fields[1])
		if err != nil || status < 400 {
			continue
		}
		// Skip the inner headers, then take the body up to the next boundary line.
		j := i + 1
		for ; j < len(lines); j++ {
			if len(bytes.TrimSuffix(lines[j], []byte("\r"))) == 0 {
				j++
				break
			}
		}
		var inner []byte
		for ; j < len(lines); j++ {
			l := bytes.TrimSuffix(lines[j], []byte("\r"))
			if bytes.HasPrefix(l, []byte("--")) {
				break
			}
			inner = append(inner, l...)
			inner = append(inner, '\n')
		}
		code, msg := azconn.ParseErrorBody(inner)
		index, msg := splitIndex(msg)
		return &service.TransactionError{
			Index: index,
			Err:   &abstractions.StatusError{StatusCode: status, ErrorCode: code, Message: msg, Err: cause},
		}
	}
	return nil
}

// splitIndex separates the "N:" action index from a batch error message.
func splitIndex(msg string) (int, string) {
	n := 0
	for n < len(msg) && msg[n] >= '0' && msg[n] <= '9' {
		n++
	}
	if n == 0 || n > 4 || n >= len(msg) || msg[n] != ':' {
		return 0, msg
	}
	index, err := strconv.Atoi(msg[:n])
	if err != nil {
		return 0, msg
	}
	return index, strings.TrimSpace(msg[n+1:])
}
