package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// TestFloorSignsAsTheSDK sends a point read through aztables to a recording server and
// checks that the floor client, given the same date and path, computes the same
// Authorization header: the floor's SharedKeyLite is the SDK's.
func TestFloorSignsAsTheSDK(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"PartitionKey":"p","RowKey":"r"}`))
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	conn := strings.NewReplacer("http://127.0.0.1:10002", srv.URL, "http://127.0.0.1:10000", srv.URL).Replace(DevelopmentConnectionString)
	sdk, err := aztables.NewServiceClientFromConnectionString(conn, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range [][2]string{{"read", "r00001"}, {"it's", "a b"}} {
		if _, err := sdk.NewClient("Orders").GetEntity(context.Background(), key[0], key[1], nil); err != nil {
			t.Fatal(err)
		}
	}
	floor, err := newFloorClient(conn, "Orders", &http.Client{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d requests", len(seen))
	}
	for i, key := range [][2]string{{"read", "r00001"}, {"it's", "a b"}} {
		r := seen[i]
		if want := floor.path + rowURL(key[0], key[1]); r.URL.EscapedPath() != want {
			t.Errorf("the SDK addressed %s, the floor would address %s", r.URL.EscapedPath(), want)
		}
		if got, want := floor.sign(r.Header.Get("x-ms-date"), r.URL.EscapedPath()), r.Header.Get("Authorization"); got != want {
			t.Errorf("floor signature %q, SDK %q", got, want)
		}
	}
}

func TestFloorClientRefusesUnusableStrings(t *testing.T) {
	for _, conn := range []string{
		"AccountName=a;TableEndpoint=http://x/a",                       // no key, no SAS
		"AccountName=a;AccountKey=not*base64;TableEndpoint=http://x/a", // key not base64
		"AccountKey=" + strings.Repeat("A", 8),                         // no endpoint
	} {
		if _, err := newFloorClient(conn, "T", http.DefaultClient); err == nil {
			t.Errorf("%q: accepted", conn)
		}
	}
}
