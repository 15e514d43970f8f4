package azservice

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// A syntactically valid key that is not the development key, to spot leaks in errors.
const testKey = "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0wMTIzNDU2Nzg5"

func TestParseConnectionString(t *testing.T) {
	tests := []struct {
		name         string
		conn         string
		table, blob  string
		account, sas string
		key          string
	}{
		{
			name:  "development storage",
			conn:  "UseDevelopmentStorage=true",
			table: "http://127.0.0.1:10002/devstoreaccount1", blob: "http://127.0.0.1:10000/devstoreaccount1",
			account: "devstoreaccount1", key: devAccountKey,
		},
		{
			name:  "development storage, any case and trailing semicolon",
			conn:  " usedevelopmentstorage = True ;",
			table: "http://127.0.0.1:10002/devstoreaccount1", blob: "http://127.0.0.1:10000/devstoreaccount1",
			account: "devstoreaccount1", key: devAccountKey,
		},
		{
			name:  "default endpoints",
			conn:  "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.windows.net",
			table: "https://acct.table.core.windows.net", blob: "https://acct.blob.core.windows.net",
			account: "acct", key: testKey,
		},
		{
			name:  "no protocol, no suffix",
			conn:  "AccountName=acct;AccountKey=" + testKey,
			table: "https://acct.table.core.windows.net", blob: "https://acct.blob.core.windows.net",
			account: "acct", key: testKey,
		},
		{
			name:  "sovereign suffix, http",
			conn:  "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.chinacloudapi.cn",
			table: "http://acct.table.core.chinacloudapi.cn", blob: "http://acct.blob.core.chinacloudapi.cn",
			account: "acct", key: testKey,
		},
		{
			name:    "only a table endpoint",
			conn:    "AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=http://localhost:9999/acct/",
			table:   "http://localhost:9999/acct",
			account: "acct", key: testKey,
		},
		{
			name:  "explicit endpoint with a protocol derives the other",
			conn:  "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=https://custom.example",
			table: "https://custom.example", blob: "https://acct.blob.core.windows.net",
			account: "acct", key: testKey,
		},
		{
			name:  "shared access signature",
			conn:  "BlobEndpoint=https://acct.blob.core.windows.net/;TableEndpoint=https://acct.table.core.windows.net/;SharedAccessSignature=?sv=2020&sig=abc",
			table: "https://acct.table.core.windows.net", blob: "https://acct.blob.core.windows.net",
			sas: "sv=2020&sig=abc",
		},
		{
			name:  "value with '='",
			conn:  "AccountName=acct;SharedAccessSignature=sv=1&sig=a%3D%3D",
			table: "https://acct.table.core.windows.net", blob: "https://acct.blob.core.windows.net",
			account: "acct", sas: "sv=1&sig=a%3D%3D",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := parseConnectionString(tc.conn)
			if err != nil {
				t.Fatal(err)
			}
			if cs.tableURL != tc.table || cs.blobURL != tc.blob || cs.accountName != tc.account ||
				cs.sas != tc.sas || cs.accountKey != tc.key {
				t.Errorf("got table %q blob %q account %q sas %q key set %v",
					cs.tableURL, cs.blobURL, cs.accountName, cs.sas, cs.accountKey != "")
			}
		})
	}
}

func TestParseConnectionStringErrors(t *testing.T) {
	tests := []struct {
		name, conn, says string
	}{
		{"empty", "", "empty"},
		{"only semicolons", ";;", "empty"},
		{"no equals", "AccountName=acct;" + testKey, "setting 2 has no '='"},
		{"bad key", "AccountName=acct;AccountKey=not*base64" + testKey, "AccountKey is not valid base64"},
		{"key without account", "AccountKey=" + testKey + ";TableEndpoint=http://h/a", "AccountKey needs AccountName"},
		{"no credential", "AccountName=acct", "needs AccountKey"},
		{"both credentials", "AccountName=acct;AccountKey=" + testKey + ";SharedAccessSignature=sig=" + testKey, "exclude each other"},
		{"unknown setting", "AccountName=acct;AccountKey=" + testKey + ";Colour=blue", "setting 3 has an unknown name"},
		{"duplicate", "AccountName=acct;AccountName=other;AccountKey=" + testKey, "appears twice"},
		{"bad protocol", "DefaultEndpointsProtocol=ftp;AccountName=acct;AccountKey=" + testKey, "http or https"},
		{"bad endpoint", "AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=not a url", "TableEndpoint is not an http or https URL"},
		{"endpoint with query", "AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=https://h/?sig=" + testKey, "must not carry a query"},
		{"no table endpoint", "AccountName=acct;AccountKey=" + testKey + ";BlobEndpoint=https://h/acct", "no table endpoint"},
		{"development storage false", "UseDevelopmentStorage=false", "only accepts the value true"},
		{"development storage mixed", "UseDevelopmentStorage=true;AccountKey=" + testKey, "cannot be combined"},
		{"development proxy", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://proxy", "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFromConnectionString(tc.conn)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, errConnString) {
				t.Errorf("%v does not match errConnString", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%q does not say %q", err, tc.says)
			}
			for _, secret := range []string{testKey, "not*base64", devAccountKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%q contains a secret", err)
				}
			}
		})
	}
}

func TestBlobsWithoutEndpoint(t *testing.T) {
	s, err := NewFromConnectionString("AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=http://127.0.0.1:1/acct")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]error{
		"CreateContainer": s.CreateContainer(ctx, "c"),
		"DeleteContainer": s.DeleteContainer(ctx, "c"),
		"DeleteBlob":      s.DeleteBlob(ctx, "c", "b", service.Conditions{}),
	}
	_, checks["Upload"] = s.Upload(ctx, "c", "b", nil, service.UploadOptions{})
	_, checks["Download"] = s.Download(ctx, "c", "b", service.Conditions{})
	_, checks["List"] = s.List(ctx, "c", service.ListOptions{})
	_, checks["Now"] = s.Now(ctx)
	for name, err := range checks {
		if !errors.Is(err, abstractions.ErrBlobOffloadNotConfigured) || !strings.Contains(err.Error(), "no blob service") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestNewPanicsWithoutTables(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil, nil) did not panic")
		}
	}()
	New(nil, nil)
}
