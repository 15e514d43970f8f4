package azservice

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
)

func TestParseBatchFailure(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		name    string
		file    string // a response captured from Azurite, or
		body    string // a hand-written one
		index   int
		status  int
		code    string
		message string
	}{
		{
			name: "entity already exists (Azurite)", file: "batch-entity-already-exists.txt",
			index: 2, status: 409, code: "EntityAlreadyExists", message: "The specified entity already exists.",
		},
		{
			name: "resource not found (Azurite)", file: "batch-resource-not-found.txt",
			index: 0, status: 404, code: "ResourceNotFound", message: "The specified resource does not exist.",
		},
		{
			// Azurite writes a stray boundary line before the status line here; the SDK
			// cannot parse it, this parser can.
			name: "more than 100 actions (Azurite)", file: "batch-too-many-azurite.txt",
			index: 0, status: 400, code: "InvalidInput",
			message: "The batch request operation exceeds the maximum 100 changes per change set.",
		},
		{
			name: "service shape, LF line ends and no N: prefix",
			body: "--batchresponse_1\nContent-Type: multipart/mixed; boundary=changesetresponse_2\n\n" +
				"--changesetresponse_2\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\n" +
				"HTTP/1.1 400 Bad Request\nContent-ID: 1\nContent-Type: application/json\n\n" +
				`{"odata.error":{"code":"PropertyValueTooLarge","message":{"lang":"en-US","value":"The property value exceeds the maximum allowed size (64KB)."}}}` +
				"\n--changesetresponse_2--\n--batchresponse_1--\n",
			index: 0, status: 400, code: "PropertyValueTooLarge",
			message: "The property value exceeds the maximum allowed size (64KB).",
		},
		{
			name: "a successful part before the failing one",
			body: "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\n" +
				"HTTP/1.1 204 No Content\r\nContent-ID: 1\r\n\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\n" +
				"HTTP/1.1 412 Precondition Failed\r\nContent-ID: 2\r\nContent-Type: application/json\r\n\r\n" +
				`{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"17:The update condition specified in the request was not satisfied."}}}` +
				"\r\n--c--\r\n--b--\r\n",
			index: 17, status: 412, code: "UpdateConditionNotSatisfied",
			message: "The update condition specified in the request was not satisfied.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			if tc.file != "" {
				var err error
				if body, err = os.ReadFile(filepath.Join("testdata", tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			te := parseBatchFailure(body, cause)
			if te == nil {
				t.Fatal("no failure found")
			}
			var se *abstractions.StatusError
			if !errors.As(te, &se) {
				t.Fatalf("%v does not wrap a StatusError", te)
			}
			if te.Index != tc.index || se.StatusCode != tc.status || se.ErrorCode != tc.code || se.Message != tc.message {
				t.Errorf("got index %d, %d %s %q; want index %d, %d %s %q",
					te.Index, se.StatusCode, se.ErrorCode, se.Message, tc.index, tc.status, tc.code, tc.message)
			}
			if !errors.Is(te, cause) {
				t.Error("the cause is not in the chain")
			}
		})
	}
}

func TestParseBatchFailureNone(t *testing.T) {
	for _, body := range []string{
		"",
		"--b\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n--b--\r\n",
		`{"odata.error":{"code":"InvalidInput","message":{"value":"x"}}}`,
	} {
		if te := parseBatchFailure([]byte(body), nil); te != nil {
			t.Errorf("%q: found %v", body, te)
		}
	}
}

func TestSplitIndex(t *testing.T) {
	tests := []struct {
		in    string
		index int
		msg   string
	}{
		{"1:The specified entity already exists.", 1, "The specified entity already exists."},
		{"99:x", 99, "x"},
		{"0: spaced", 0, "spaced"},
		{"No prefix: here", 0, "No prefix: here"},
		{"12345:too long for an index", 0, "12345:too long for an index"},
		{"7", 0, "7"},
		{"", 0, ""},
	}
	for _, tc := range tests {
		if i, m := splitIndex(tc.in); i != tc.index || m != tc.msg {
			t.Errorf("splitIndex(%q) = %d, %q; want %d, %q", tc.in, i, m, tc.index, tc.msg)
		}
	}
}

func TestCapturedFixturesAreAnonymous(t *testing.T) {
	// The fixtures are raw responses; make sure they carry no host or account.
	files, _ := filepath.Glob(filepath.Join("testdata", "batch-*.txt"))
	if len(files) != 3 {
		t.Fatalf("found %d fixtures, want 3", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); strings.Contains(s, "127.0.0.1") || strings.Contains(s, "devstoreaccount1") {
			t.Errorf("%s names a host or an account", f)
		}
	}
}
