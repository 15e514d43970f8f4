package azblobs_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/service"
)

// A transport failure must not carry the request URL's query: with a shared access
// signature it holds the signature.
func TestTransportErrorsHideTheSignature(t *testing.T) {
	const sig = "c2lnbmF0dXJl+LXNlY3JldC1k/by1ub3QtbG9n="
	conn := "TableEndpoint=http://127.0.0.1:1/acct;BlobEndpoint=http://127.0.0.1:1/acct;" +
		"SharedAccessSignature=sv=2020-08-04&ss=bt&srt=sco&sp=rwdlacu&se=2099-01-01T00:00:00Z&sig=" + url.QueryEscape(sig)
	for _, retries := range []int32{-1, 1} {
		opts := azcore.ClientOptions{Retry: policy.RetryOptions{
			MaxRetries: retries, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond,
		}}
		s, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		b, err := azblobs.NewFromConnectionString(conn, &azblobs.Options{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s: no error from a closed port", what)
			}
			for e := err; e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), sig) || strings.Contains(e.Error(), url.QueryEscape(sig)) {
					t.Errorf("%s (retries %d): the error chain holds the signature: %v", what, retries, e)
				}
			}
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Errorf("%s: %v no longer unwraps to a *url.Error", what, err)
			} else if !strings.Contains(ue.URL, "127.0.0.1:1") {
				t.Errorf("%s: the URL %q lost its host", what, ue.URL)
			}
		}
		_, err = s.Query(ctx, "tbl", service.Query{Filter: "PartitionKey eq 'p'"})
		check("query", err)
		_, err = s.GetRow(ctx, "tbl", "p", "r", nil)
		check("get row", err)
		blob, err := b.Download(ctx, "box", "name", service.Conditions{})
		if err == nil {
			_, err = io.ReadAll(blob.Body)
			_ = blob.Body.Close()
		}
		check("download", err)
	}
}

// The Azure SDK's own log (package azcore/log, with a listener set) never holds the
// credential: not the signature of a SAS, whose URL the SDK's retry policy logs with each
// transport failure, and not an account key, for the table client (aztables' requests and
// the entity requests) and the blob client alike.
func TestSDKLogHidesTheCredential(t *testing.T) {
	const sig = "c2lnbmF0dXJl+LXNlY3JldC1k/by1ub3QtbG9n="
	const key = "c2VjcmV0LWFjY291bnQta2V5LWRvLW5vdC1sb2c="
	const endpoints = "TableEndpoint=http://127.0.0.1:1/acct;BlobEndpoint=http://127.0.0.1:1/acct;"
	for _, tc := range []struct {
		name, conn, secret string
	}{
		{"SAS", endpoints + "SharedAccessSignature=sv=2020-08-04&ss=bt&srt=sco&sp=rwdlacu&se=2099-01-01T00:00:00Z&sig=" + url.QueryEscape(sig), sig},
		{"account key", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";" + endpoints, key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var lines []string
			azlog.SetListener(func(ev azlog.Event, msg string) {
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, string(ev)+": "+msg)
			})
			defer azlog.SetListener(nil)

			opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 1, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}}
			s, err := azservice.NewFromConnectionString(tc.conn, &azservice.Options{ClientOptions: opts})
			if err != nil {
				t.Fatal(err)
			}
			b, err := azblobs.NewFromConnectionString(tc.conn, &azblobs.Options{ClientOptions: opts})
			if err != nil {
				t.Fatal(err)
			}
			acct, err := tables.NewAccount(tc.conn, &tables.Options{Blobs: azblobs.Connect, BlobOffload: &tables.BlobOffloadOptions{}, ClientOptions: opts})
			if err != nil {
				t.Fatal(err)
			}
			type doc struct {
				abstractions.Entity
				File *abstractions.File
			}
			store, err := tables.For[doc](acct, &tables.StoreOptions{Table: "Docs"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			row := service.Row{PartitionKey: "p", RowKey: "r"}
			for what, call := range map[string]func() error{
				"table: query":        func() error { _, err := s.Query(ctx, "tbl", service.Query{Filter: "PartitionKey eq 'p'"}); return err },
				"table: create table": func() error { return s.CreateTable(ctx, "tbl") },
				"table: get row":      func() error { _, err := s.GetRow(ctx, "tbl", "p", "r", nil); return err },
				"table: write row": func() error {
					_, err := s.Write(ctx, "tbl", service.Action{Op: service.OpUpsertReplace, Row: row})
					return err
				},
				"table: transaction": func() error {
					_, err := s.Transact(ctx, "tbl", []service.Action{{Op: service.OpInsert, Row: row}})
					return err
				},
				"blob: create container": func() error { return b.CreateContainer(ctx, "box") },
				"blob: upload":           func() error { _, err := b.Upload(ctx, "box", "name", []byte("x"), service.UploadOptions{}); return err },
				"blob: download":         func() error { _, err := b.Download(ctx, "box", "name", service.Conditions{}); return err },
				"blob: list":             func() error { _, err := b.List(ctx, "box", service.ListOptions{}); return err },
				"store: create with a file": func() error {
					return store.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|r"}, File: abstractions.FileFromBytes([]byte("x"), "")})
				},
				"store: read": func() error { _, err := store.One(ctx, "p|r"); return err },
			} {
				if err := call(); err == nil {
					t.Errorf("%s: no error from a closed port", what)
				} else if strings.Contains(err.Error(), tc.secret) || strings.Contains(err.Error(), url.QueryEscape(tc.secret)) {
					t.Errorf("%s: the error holds the secret: %v", what, err)
				}
			}

			mu.Lock()
			defer mu.Unlock()
			signed := regexp.MustCompile(`(?i)sig=[^&\s"]*|SharedKey(Lite)? [^\s]*`)
			retried := 0
			for _, l := range lines {
				if strings.Contains(l, tc.secret) || strings.Contains(l, url.QueryEscape(tc.secret)) {
					t.Errorf("a log line holds the secret: %s", l)
				}
				for _, m := range signed.FindAllString(l, -1) {
					if !strings.HasSuffix(m, "REDACTED") {
						t.Errorf("a log line holds a signature (%s): %s", m, l)
					}
				}
				if strings.HasPrefix(l, string(azlog.EventRetryPolicy)+": error ") && strings.Contains(l, "127.0.0.1:1") {
					retried++
				}
			}
			// The retry policy logs each failed try with the transport's error, which names
			// the URL: the lines above were checked, not missing.
			if retried < 11 {
				t.Errorf("the retry policy logged %d failed tries naming the endpoint, want one per try at least (11 calls)", retried)
			}
		})
	}
}
