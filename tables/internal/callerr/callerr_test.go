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
		f := Answered(&abstractions.StatusError{StatusCode: tc.status}, "the table service refused the request")
		if f.Kind != tc.kind || !strings.Contains(f.Message, tc.says) {
			t.Errorf("status %d: got %v %q, want %v and a message saying %q", tc.status, f.Kind, f.Message, tc.kind, tc.says)
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
		f, ok := Ended(tc.err)
		if ok != tc.ok || f.Kind != tc.kind || (ok && f.Message == "") {
			t.Errorf("%v: got %v %q %v, want %v %v", tc.err, f.Kind, f.Message, ok, tc.kind, tc.ok)
		}
	}
}
