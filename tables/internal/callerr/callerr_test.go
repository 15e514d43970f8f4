package callerr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// unknown is the sentence of a write left without an answer.
const unknown = "may or may not have been applied"

func TestAnswered(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   error
		says   string
	}{
		{503, abstractions.ErrUnavailable, "answered 503 after the client's retries"},
		{500, abstractions.ErrUnavailable, "answered 500"},
		{403, nil, "refused the credential"},
		{400, nil, "the table service refused the request"},
	} {
		for _, r := range []Request{Read, Write} {
			f := Answered(&abstractions.StatusError{StatusCode: tc.status}, r, "the table service refused the request")
			if f.Kind != tc.kind || !strings.Contains(f.Message, tc.says) {
				t.Errorf("status %d: got %v %q, want %v and a message saying %q", tc.status, f.Kind, f.Message, tc.kind, tc.says)
			}
			// A 5xx answer leaves a write's outcome unknown; a refusal is an answer.
			if got, want := strings.Contains(f.Message, unknown), r == Write && tc.status >= 500; got != want {
				t.Errorf("status %d, write %v: %q says %q: %v, want %v", tc.status, r, f.Message, unknown, got, want)
			}
		}
	}
}

func TestEnded(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind error
		ok   bool
	}{
		{fmt.Errorf("send: %w", context.Canceled), context.Canceled, true},
		{fmt.Errorf("send: %w", context.DeadlineExceeded), abstractions.ErrUnavailable, true},
		{errors.New("connection refused"), nil, false},
	} {
		for _, r := range []Request{Read, Write} {
			f, ok := Ended(tc.err, r)
			if ok != tc.ok || f.Kind != tc.kind || (ok && f.Message == "") {
				t.Errorf("%v: got %v %q %v, want %v %v", tc.err, f.Kind, f.Message, ok, tc.kind, tc.ok)
			}
			if got, want := strings.Contains(f.Message, unknown), ok && r == Write; got != want {
				t.Errorf("%v, write %v: %q says %q: %v, want %v", tc.err, r, f.Message, unknown, got, want)
			}
		}
	}
}

func TestUnreachable(t *testing.T) {
	for _, r := range []Request{Read, Write} {
		f := Unreachable(r)
		if f.Kind != abstractions.ErrUnavailable || !strings.Contains(f.Message, "could not be reached") {
			t.Errorf("write %v: got %v %q", r, f.Kind, f.Message)
		}
		if got, want := strings.Contains(f.Message, unknown), r == Write; got != want {
			t.Errorf("write %v: %q says %q: %v, want %v", r, f.Message, unknown, got, want)
		}
	}
}

// TestCosmosCodes: the codes Azure Cosmos DB for Table answers, as the Azure SDK for .NET's
// live tests assert them against both services, classify as Table Storage's do. Only a
// request its SAS does not permit differs (Forbidden, where Table Storage says
// AuthorizationPermissionMismatch), and a 403 is classified by its status alone.
func TestCosmosCodes(t *testing.T) {
	for _, tc := range []struct {
		status     int
		code, also string // the Cosmos DB code, and Table Storage's when it differs
		kind       error
	}{
		{409, "EntityAlreadyExists", "", abstractions.ErrDuplicateKey},
		{404, "ResourceNotFound", "", abstractions.ErrNotFound},
		{412, "UpdateConditionNotSatisfied", "", abstractions.ErrConcurrencyConflict},
		{403, "Forbidden", "AuthorizationPermissionMismatch", nil},
	} {
		err := Table("update", "t", "p", "r", &abstractions.StatusError{StatusCode: tc.status, ErrorCode: tc.code})
		var se *abstractions.StoreError
		if !errors.As(err, &se) || se.Kind != tc.kind {
			t.Errorf("%d %s: got %v, want kind %v", tc.status, tc.code, err, tc.kind)
			continue
		}
		if tc.also != "" {
			storage := Table("update", "t", "p", "r", &abstractions.StatusError{StatusCode: tc.status, ErrorCode: tc.also})
			if !errors.As(storage, new(*abstractions.StoreError)) || storage.(*abstractions.StoreError).Kind != se.Kind || storage.(*abstractions.StoreError).Message != se.Message {
				t.Errorf("%d: %s gives %v, %s gives %v", tc.status, tc.code, err, tc.also, storage)
			}
		}
	}
}
