package azservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Transact performs an entity-group transaction with one Submit Transaction call.
//
// Replace and Merge carry If-Match (the action's ETag, or * when empty): without it the
// SDK sends no condition and the service would upsert. The upserts carry none; Delete
// carries If-Match like Replace. The SDK checks none of the service's transaction rules,
// and neither does Transact: the service does.
//
// A failure of one action is a *service.TransactionError whose Err is the
// *abstractions.StatusError of that action, read from the multipart response (the SDK
// reports only the batch's 202). A failure of the whole request (such as 413
// RequestBodyTooLarge) is a plain *abstractions.StatusError. An empty transaction fails
// with 400 InvalidInput without a call, as the service rejects an empty change set.
//
// Transact refuses, without sending anything, what Write refuses, and a Replace, Merge or
// upsert action whose keys contain a single quote: the SDK writes batched keys into the
// action's URL without doubling quotes, and the body's keys must stay as they are, so such
// an action would address another row. (Delete actions have no body; their keys are
// escaped here.)
func (s *Service) Transact(ctx context.Context, table string, actions []service.Action) error {
	if len(actions) == 0 {
		return &abstractions.StatusError{
			StatusCode: http.StatusBadRequest,
			ErrorCode:  "InvalidInput",
			Message:    "the transaction has no actions",
		}
	}
	bp := getBuf()
	defer putBuf(bp)
	buf := (*bp)[:0]
	ends := make([]int, len(actions))
	tas := make([]aztables.TransactionAction, len(actions))
	for i := range actions {
		a := &actions[i]
		pk, rk := a.Row.PartitionKey, a.Row.RowKey
		if a.Op != service.OpInsert && pk == "" {
			return fmt.Errorf("azservice: transaction action %d: %w", i, errEmptyPartitionKey)
		}
		ifMatch := azcore.ETag(a.IfMatch)
		if ifMatch == "" {
			ifMatch = azcore.ETagAny
		}
		ta := &tas[i]
		switch a.Op {
		case service.OpInsert:
			ta.ActionType = aztables.TransactionTypeAdd
		case service.OpReplace:
			ta.ActionType, ta.IfMatch = aztables.TransactionTypeUpdateReplace, &ifMatch
		case service.OpMerge:
			ta.ActionType, ta.IfMatch = aztables.TransactionTypeUpdateMerge, &ifMatch
		case service.OpUpsertReplace:
			ta.ActionType = aztables.TransactionTypeInsertReplace
		case service.OpUpsertMerge:
			ta.ActionType = aztables.TransactionTypeInsertMerge
		case service.OpDelete:
			ta.ActionType, ta.IfMatch = aztables.TransactionTypeDelete, &ifMatch
		default:
			return fmt.Errorf("azservice: transaction action %d: unknown operation %v", i, a.Op)
		}
		var err error
		switch {
		case a.Op == service.OpDelete:
			buf = appendKeys(buf, doubleQuotes(pk), doubleQuotes(rk))
		case a.Op != service.OpInsert && (strings.IndexByte(pk, '\'') >= 0 || strings.IndexByte(rk, '\'') >= 0):
			return fmt.Errorf("azservice: transaction action %d: the SDK cannot address a key containing a single quote in a batched %v; write the row alone: %w",
				i, a.Op, abstractions.ErrNotSupported)
		default:
			if buf, err = appendEntity(buf, pk, rk, a.Row.Properties); err != nil {
				*bp = buf
				return fmt.Errorf("azservice: transaction action %d: %w", i, err)
			}
		}
		ends[i] = len(buf)
	}
	*bp = buf
	start := 0
	for i := range tas {
		tas[i].Entity = buf[start:ends[i]:ends[i]]
		start = ends[i]
	}

	var raw *http.Response
	_, err := s.tables.NewClient(table).SubmitTransaction(policy.WithCaptureResponse(ctx, &raw), tas, nil)
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.StatusCode == http.StatusAccepted && re.RawResponse != nil {
			if body, perr := runtime.Payload(re.RawResponse); perr == nil {
				if te := parseBatchFailure(body, re); te != nil {
					return te
				}
			}
		}
		return azconn.StatusError(re)
	}
	if ctx.Err() == nil && raw != nil && raw.StatusCode == http.StatusAccepted {
		// Azurite answers a change set of more than 100 actions with a stray line before
		// the inner status line; the SDK then fails with "malformed HTTP response" and no
		// *azcore.ResponseError. The body still says what the service meant (400
		// InvalidInput, "0:The batch request operation exceeds the maximum 100 changes per
		// change set."), which is also what the real service reports, so read it.
		if body, perr := runtime.Payload(raw); perr == nil {
			if te := parseBatchFailure(body, err); te != nil {
				return te
			}
		}
	}
	return mapError(ctx, "transaction", err)
}

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
