package azservice

import (
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/unified-data/gotables/tables/service"
)

// Service is the table and blob service of one Azure Storage account (or Azurite), reached
// through the Azure SDK. It implements service.Tables and service.Blobs and is safe for
// concurrent use.
type Service struct {
	tables   *aztables.ServiceClient
	blobs    *azblob.Client
	endpoint string
}

var (
	_ service.Tables = (*Service)(nil)
	_ service.Blobs  = (*Service)(nil)
)

// Options configure the clients NewFromConnectionStringWithOptions builds.
type Options struct {
	// ClientOptions apply to both the table and the blob client: transport, retries,
	// logging, telemetry. The zero value is the SDK's defaults.
	ClientOptions azcore.ClientOptions
}

// New returns a Service over clients the caller built, with whatever credential they
// carry. tables must not be nil. blobs may be nil: the Blobs methods then fail with an
// error that matches abstractions.ErrBlobOffloadNotConfigured.
func New(tables *aztables.ServiceClient, blobs *azblob.Client) *Service {
	if tables == nil {
		panic("azservice: New needs a table service client")
	}
	// The SDK client does not tell its URL; the client's identity names the account.
	return &Service{tables: tables, blobs: blobs, endpoint: fmt.Sprintf("aztables-client-%p", tables)}
}

// NewFromConnectionString returns a Service for an Azure Storage connection string with an
// AccountKey or a SharedAccessSignature, including "UseDevelopmentStorage=true", which
// stands for Azurite on its default loopback ports with the well-known development account.
// A string whose endpoints include no blob endpoint yields a Service whose Blobs methods
// fail; one without a table endpoint is refused. Errors name the faulty setting, never a
// key or a signature.
func NewFromConnectionString(conn string) (*Service, error) {
	return NewFromConnectionStringWithOptions(conn, nil)
}

// NewFromConnectionStringWithOptions is NewFromConnectionString with client options; nil
// opts means the defaults.
func NewFromConnectionStringWithOptions(conn string, opts *Options) (*Service, error) {
	cs, err := parseConnectionString(conn)
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{endpoint: cs.tableURL}
	topts := &aztables.ClientOptions{ClientOptions: opts.ClientOptions}
	topts.PerCallPolicies = append(append([]policy.Policy(nil), topts.PerCallPolicies...), bodyTap{})
	bopts := &azblob.ClientOptions{ClientOptions: opts.ClientOptions}
	bopts.PerCallPolicies = append(append([]policy.Policy(nil), bopts.PerCallPolicies...), identityEncoding{})
	if cs.accountKey != "" {
		tcred, err := aztables.NewSharedKeyCredential(cs.accountName, cs.accountKey)
		if err != nil {
			return nil, fmt.Errorf("%w: AccountKey is not usable", errConnString)
		}
		if s.tables, err = aztables.NewServiceClientWithSharedKey(cs.tableURL, tcred, topts); err != nil {
			return nil, fmt.Errorf("azservice: creating the table client: %w", err)
		}
		if cs.blobURL != "" {
			bcred, err := azblob.NewSharedKeyCredential(cs.accountName, cs.accountKey)
			if err != nil {
				return nil, fmt.Errorf("%w: AccountKey is not usable", errConnString)
			}
			if s.blobs, err = azblob.NewClientWithSharedKeyCredential(cs.blobURL+"/", bcred, bopts); err != nil {
				return nil, fmt.Errorf("azservice: creating the blob client: %w", err)
			}
		}
		return s, nil
	}
	if s.tables, err = aztables.NewServiceClientWithNoCredential(cs.tableURL+"/?"+cs.sas, topts); err != nil {
		return nil, fmt.Errorf("azservice: creating the table client: %w", err)
	}
	if cs.blobURL != "" {
		if s.blobs, err = azblob.NewClientWithNoCredential(cs.blobURL+"/?"+cs.sas, bopts); err != nil {
			return nil, fmt.Errorf("azservice: creating the blob client: %w", err)
		}
	}
	return s, nil
}

// identityEncoding asks for blob content as stored. Without an Accept-Encoding header Go's
// HTTP transport asks for gzip itself and then transparently gunzips any response whose
// Content-Encoding is gzip, so a blob stored with that encoding would come back decoded (or,
// if it is not really gzip, fail to read). Blob content is opaque bytes to this library.
type identityEncoding struct{}

func (identityEncoding) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set("Accept-Encoding", "identity")
	return req.Next()
}

// Endpoint names the account: the table endpoint URL (never with a signature) for a service
// made from a connection string, an identifier of the client for one made by New.
func (s *Service) Endpoint() string { return s.endpoint }
