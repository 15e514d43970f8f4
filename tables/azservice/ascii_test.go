package azservice

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

func TestEscapeNonASCII(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ascii", `{"a":"plain"}`, `{"a":"plain"}`},
		{"two-byte", `{"a":"é"}`, `{"a":"\u00e9"}`},
		{"three-byte", `{"a":"中\u2028"}`, `{"a":"\u4e2d\u2028"}`},
		{"surrogate pair", `{"a":"😀"}`, `{"a":"\ud83d\ude00"}`},
		{"names too", `{"ñ":"x"}`, `{"\u00f1":"x"}`},
		{"invalid byte", "{\"a\":\"\xff\"}", `{"a":"\ufffd"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := in
			if i := firstNonASCII(in); i >= 0 {
				got = escapeNonASCII(in, i)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if i := firstNonASCII(got); i >= 0 {
				t.Fatalf("byte %d of the result is not ASCII", i)
			}
			var a, b map[string]string
			if err := json.Unmarshal(in, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &b); err != nil {
				t.Fatal(err)
			}
			for k, v := range a {
				if b[k] != v {
					t.Errorf("%q: %q became %q", k, v, b[k])
				}
			}
		})
	}
}

// bodyRecorder is a transport that keeps the body of each request and answers it as the
// service answers a write, without a network.
type bodyRecorder struct{ bodies []string }

func (r *bodyRecorder) Do(req *http.Request) (*http.Response, error) {
	var b []byte
	if req.Body != nil {
		var err error
		if b, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	r.bodies = append(r.bodies, string(b))
	if strings.HasSuffix(req.URL.Path, "$batch") {
		// A refusal: the SDK cannot parse a batch answer without a multipart body.
		return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}
	h := http.Header{"Etag": []string{`W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"`}}
	return &http.Response{StatusCode: http.StatusNoContent, Header: h, Body: http.NoBody, Request: req}, nil
}

// Only the emulator's development account gets ASCII bodies; transactions are left as
// they are (Azurite reads them whole).
func TestASCIIBodiesForTheEmulatorOnly(t *testing.T) {
	ctx := context.Background()
	text := service.String("é中😀")
	for _, tc := range []struct {
		account string
		ascii   bool
	}{{azconn.DevAccountName, true}, {"someaccount", false}} {
		t.Run(tc.account, func(t *testing.T) {
			rec := &bodyRecorder{}
			conn := "DefaultEndpointsProtocol=http;AccountName=" + tc.account + ";AccountKey=" + azconn.DevAccountKey +
				";TableEndpoint=http://127.0.0.1:1/" + tc.account
			s, err := NewFromConnectionString(conn, &Options{ClientOptions: azcore.ClientOptions{Transport: rec}})
			if err != nil {
				t.Fatal(err)
			}
			r := service.Row{PartitionKey: "p", RowKey: "é", Properties: []service.Property{{Name: "S", Value: text}}}
			for _, op := range []service.Op{service.OpInsert, service.OpReplace, service.OpUpsertMerge} {
				if _, err := s.Write(ctx, "T", service.Action{Op: op, Row: r}); err != nil {
					t.Fatalf("%v: %v", op, err)
				}
			}
			for i, b := range rec.bodies {
				if (firstNonASCII([]byte(b)) < 0) != tc.ascii {
					t.Errorf("write %d sent %s", i, b)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(b), &m); err != nil || m["S"] != text.Str() || m["RowKey"] != "é" {
					t.Errorf("write %d sent %s (%v)", i, b, err)
				}
			}
			rec.bodies = nil
			_ = txErr(s.Transact(ctx, "T", []service.Action{{Op: service.OpUpsertReplace, Row: r}})) // the fake refuses it
			if len(rec.bodies) != 1 || !strings.Contains(rec.bodies[0], text.Str()) {
				t.Errorf("the transaction's body was rewritten: %q", rec.bodies)
			}
		})
	}
}
