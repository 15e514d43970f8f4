package retry

import (
	"net/http"
	"testing"
)

func TestBusyResponse(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		busy   bool
	}{
		{http.StatusServiceUnavailable, "ServerBusy", true},
		{http.StatusServiceUnavailable, "", true},
		{http.StatusTooManyRequests, "", true},
		{http.StatusInternalServerError, "OperationTimedOut", true},
		{http.StatusInternalServerError, "InternalError", false},
		{http.StatusConflict, "EntityAlreadyExists", false},
		{http.StatusAccepted, "", false},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
		if tc.code != "" {
			resp.Header.Set("x-ms-error-code", tc.code)
		}
		if got := busyResponse(resp); got != tc.busy {
			t.Errorf("%d %s: busy = %v, want %v", tc.status, tc.code, got, tc.busy)
		}
	}
}
