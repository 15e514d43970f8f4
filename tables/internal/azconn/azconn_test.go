package azconn

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
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
			account: "devstoreaccount1", key: DevAccountKey,
		},
		{
			name:  "development storage, any case and trailing semicolon",
			conn:  " usedevelopmentstorage = True ;",
			table: "http://127.0.0.1:10002/devstoreaccount1", blob: "http://127.0.0.1:10000/devstoreaccount1",
			account: "devstoreaccount1", key: DevAccountKey,
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
			name:    "Cosmos DB for Table: no blob endpoint derived",
			conn:    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=https://acct.table.cosmos.azure.com:443/;",
			table:   "https://acct.table.cosmos.azure.com:443",
			account: "acct", key: testKey,
		},
		{
			name:  "Cosmos DB for Table with a blob endpoint given",
			conn:  "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=https://acct.table.cosmos.azure.com:443/;BlobEndpoint=https://store.blob.core.windows.net",
			table: "https://acct.table.cosmos.azure.com:443", blob: "https://store.blob.core.windows.net",
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
			cs, err := Parse(tc.conn)
			if err != nil {
				t.Fatal(err)
			}
			if cs.TableURL != tc.table || cs.BlobURL != tc.blob || cs.AccountName != tc.account ||
				cs.SAS != tc.sas || cs.AccountKey != tc.key {
				t.Errorf("got table %q blob %q account %q sas %q key set %v",
					cs.TableURL, cs.BlobURL, cs.AccountName, cs.SAS, cs.AccountKey != "")
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
		{"account name with a host", "AccountName=evil.example.com:443/x?;AccountKey=" + testKey, "AccountName is not an account name"},
		{"account name with user information", "AccountName=u@evil;AccountKey=" + testKey, "AccountName is not an account name"},
		{"account name in capitals", "AccountName=Acct;AccountKey=" + testKey, "AccountName is not an account name"},
		{"account name with an underscore", "AccountName=my_acct;AccountKey=" + testKey, "AccountName is not an account name"},
		{"account name ending with a hyphen", "AccountName=acct-;AccountKey=" + testKey, "AccountName is not an account name"},
		{"suffix with a port", "AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=evil.example:8080", "EndpointSuffix is not a host name"},
		{"suffix with a path", "AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=evil.example/x", "EndpointSuffix is not a host name"},
		{"suffix with a query", "AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.windows.net?x=1", "EndpointSuffix is not a host name"},
		{"suffix with user information", "AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=u@evil.example", "EndpointSuffix is not a host name"},
		{"endpoint with user information", "AccountName=acct;AccountKey=" + testKey + ";TableEndpoint=https://user:pw@h/a", "must not carry user information"},
		{"development storage false", "UseDevelopmentStorage=false", "only accepts the value true"},
		{"development storage mixed", "UseDevelopmentStorage=true;AccountKey=" + testKey, "cannot be combined"},
		{"development proxy", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://proxy", "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.conn)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrConnString) {
				t.Errorf("%v does not match ErrConnString", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%q does not say %q", err, tc.says)
			}
			for _, secret := range []string{testKey, "not*base64", DevAccountKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%q contains a secret", err)
				}
			}
		})
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		body, code, msg string
	}{
		{`{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"The table specified does not exist.\nRequestId:abc\nTime:2026-01-01T00:00:00.000Z"}}}`,
			"TableNotFound", "The table specified does not exist."},
		{`{"error":{"code":"Other","message":"plain message"}}`, "Other", "plain message"},
		{"\ufeff<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobNotFound</Code><Message>The specified blob does not exist.\nRequestId:x\nTime:y</Message></Error>",
			"BlobNotFound", "The specified blob does not exist."},
		{`<?xml version="1.0" encoding="utf-8"?><Error><Code>ContainerNotFound</Code><Message>The specified container does not exist.</Message></Error>`,
			"ContainerNotFound", "The specified container does not exist."},
		{"", "", ""},
		{"not an error body", "", ""},
	}
	for _, tc := range tests {
		code, msg := ParseErrorBody([]byte(tc.body))
		if code != tc.code || msg != tc.msg {
			t.Errorf("ParseErrorBody(%.40q) = %q, %q; want %q, %q", tc.body, code, msg, tc.code, tc.msg)
		}
	}
}

// The context's end still shows through a redacted transport error.
func TestRedactedErrorKeepsTheCause(t *testing.T) {
	inner := &url.Error{Op: "Get", URL: "http://h/acct/t()?sv=1&sig=SECRET", Err: context.Canceled}
	err := WithoutQuery(errors.Join(errors.New("outer"), inner))
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("%v holds the signature", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v lost its cause", err)
	}
	if got := WithoutQuery(inner).Error(); got != `Get "http://h/acct/t()": context canceled` {
		t.Errorf("WithoutQuery(url.Error) = %q", got)
	}
	plain := errors.New("no URL")
	if WithoutQuery(plain) != plain {
		t.Error("an error without a URL changed")
	}
}

func TestKeyInClear(t *testing.T) {
	key := Settings{AccountName: "acct", AccountKey: testKey}
	sas := Settings{SAS: "sig=x"}
	for _, tc := range []struct {
		cs       Settings
		endpoint string
		want     bool
	}{
		{key, "http://example.com/acct", true},
		{key, "http://10.0.0.5:10002/acct", true},
		{key, "https://acct.table.core.windows.net", false},
		{key, "http://127.0.0.1:10002/devstoreaccount1", false},
		{key, "http://127.8.9.10:10002/devstoreaccount1", false},
		{key, "http://localhost:10002/devstoreaccount1", false},
		{key, "http://[::1]:10002/devstoreaccount1", false},
		{sas, "http://example.com/acct", false},
	} {
		if got := KeyInClear(tc.cs, tc.endpoint); got != tc.want {
			t.Errorf("KeyInClear(%s) = %v, want %v", tc.endpoint, got, tc.want)
		}
	}
}
