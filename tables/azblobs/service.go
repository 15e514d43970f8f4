// Package azblobs is the Azure adapter of the blob service: it implements service.Blobs over
// the Azure SDK's azblob client, for Azure Storage and for Azurite.
//
// It is a package of its own so that a program that stores only table rows does not link the
// blob SDK. A program opts in to blob features (blob offload, files, blob documents) by
// importing it:
//
//	acct, err := tables.NewAccount(conn, &tables.Options{Blobs: azblobs.Connect})
//
// [ConnectTo] gives an account another account's blob service instead: the way for an Azure
// Cosmos DB for Table account, which has none.
//
// Failures are *abstractions.StatusError values with the blob service's codes (404
// BlobNotFound and ContainerNotFound, 409 BlobAlreadyExists, 412 ConditionNotMet, …), with
// the SDK's *azcore.ResponseError in the chain; no error carries a key or a signature.
package azblobs

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/unified-data/gotables/tables/blobconn"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Service is the blob service of one Azure Storage account (or Azurite). It implements
// service.Blobs and is safe for concurrent use.
type Service struct {
	blobs *azblob.Client
}

var _ service.Blobs = (*Service)(nil)

// Options configure the client a constructor builds. A nil *Options, like the zero value,
// means the SDK's defaults.
type Options struct {
	// ClientOptions are the Azure SDK's client options: transport, retries, policies,
	// logging, telemetry and tracing.
	ClientOptions azcore.ClientOptions
}

// clientOptions returns the blob client's options: the caller's, with a per-retry policy
// that counts each try (see attempt.Attempts), so that blob documents can tell a refusal
// their own earlier, applied try caused, and one after it that takes the query (a SAS) off
// the URL of a transport failure before the SDK's retry policy logs it (azconn.Redacting).
func (o *Options) clientOptions() *azblob.ClientOptions {
	co := &azblob.ClientOptions{}
	if o != nil {
		co.ClientOptions = o.ClientOptions
	}
	co.PerRetryPolicies = append(append([]policy.Policy(nil), co.PerRetryPolicies...), azconn.CountTries{})
	co.ClientOptions = azconn.Redacting(co.ClientOptions)
	return co
}

// Connect builds the blob service of an account from what the account's constructor was
// given: its blob endpoint and credential. Set it as tables.Options.Blobs to give an account
// blob support. An account whose constructor knows no blob endpoint is refused with
// abstractions.ErrInvalidArgument; for an Azure Cosmos DB for Table account, which has no
// blob service, use [ConnectTo].
func Connect(ep blobconn.Endpoint) (service.Blobs, error) {
	if ep.URL == "" {
		return nil, fmt.Errorf("%w: azblobs: the account names no blob endpoint (give its BlobEndpoint; an Azure Cosmos DB for Table account has none: connect a storage account's with azblobs.ConnectTo)", abstractions.ErrInvalidArgument)
	}
	opts := &Options{ClientOptions: ep.ClientOptions}
	switch {
	case ep.Credential != nil:
		return NewWithCredential(ep.URL, ep.Credential, opts)
	case ep.AccountKey != "":
		return NewWithSharedKey(ep.URL, ep.AccountName, ep.AccountKey, opts)
	case ep.SAS != "":
		return newWithSAS(ep.URL, ep.SAS, opts)
	}
	return nil, fmt.Errorf("%w: azblobs: the blob endpoint carries no credential", abstractions.ErrInvalidArgument)
}

// ConnectTo returns a connector of the blob service of another storage account, the one
// connectionString names (with an AccountKey or a SharedAccessSignature), whatever endpoint
// and credential the table account has. Set it as tables.Options.Blobs for an account whose
// table service has no blob service beside it, such as Azure Cosmos DB for Table:
//
//	acct, err := tables.NewAccount(cosmosConn, &tables.Options{Blobs: azblobs.ConnectTo(storageConn)})
//
// The blob client takes the table account's client options (transport, retries, policies,
// telemetry). A connection string it cannot use fails when the account is built, as
// [NewFromConnectionString] fails.
func ConnectTo(connectionString string) blobconn.Connector {
	return func(ep blobconn.Endpoint) (service.Blobs, error) {
		return NewFromConnectionString(connectionString, &Options{ClientOptions: ep.ClientOptions})
	}
}

// URL returns the blob service's endpoint, such as "https://myaccount.blob.core.windows.net",
// without a signature.
func (s *Service) URL() string {
	u, err := url.Parse(s.blobs.URL())
	if err != nil {
		return ""
	}
	u.RawQuery = ""
	return strings.TrimRight(u.String(), "/")
}

// NewFromConnectionString returns the blob Service of an Azure Storage connection string
// (see azservice.NewFromConnectionString for the settings it understands). A string that
// names no blob endpoint is refused with abstractions.ErrInvalidArgument.
func NewFromConnectionString(conn string, opts *Options) (*Service, error) {
	cs, err := azconn.Parse(conn)
	if err != nil {
		return nil, err
	}
	if cs.BlobURL == "" {
		return nil, azconn.NoEndpoint("blob")
	}
	if cs.AccountKey != "" {
		return NewWithSharedKey(cs.BlobURL, cs.AccountName, cs.AccountKey, opts)
	}
	return newWithSAS(cs.BlobURL, cs.SAS, opts)
}

// NewWithSharedKey returns the blob Service at blobURL authenticated with an account's
// shared key.
func NewWithSharedKey(blobURL, accountName, accountKey string, opts *Options) (*Service, error) {
	if err := azservice.CheckEndpoint("blob", blobURL); err != nil {
		return nil, err
	}
	cred, err := azblob.NewSharedKeyCredential(accountName, accountKey)
	if err != nil {
		return nil, fmt.Errorf("%w: the account key is not usable", abstractions.ErrInvalidArgument)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(blobURL+"/", cred, opts.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("azblobs: creating the blob client: %w", err)
	}
	return &Service{blobs: c}, nil
}

// NewWithCredential returns the blob Service at blobURL authenticated with a token
// credential, for example one of package azidentity.
func NewWithCredential(blobURL string, cred azcore.TokenCredential, opts *Options) (*Service, error) {
	if cred == nil {
		return nil, fmt.Errorf("%w: azblobs: the credential is nil", abstractions.ErrInvalidArgument)
	}
	if err := azservice.CheckEndpoint("blob", blobURL); err != nil {
		return nil, err
	}
	c, err := azblob.NewClient(blobURL+"/", cred, opts.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("azblobs: creating the blob client: %w", err)
	}
	return &Service{blobs: c}, nil
}

func newWithSAS(blobURL, sas string, opts *Options) (*Service, error) {
	if err := azservice.CheckEndpoint("blob", blobURL); err != nil {
		return nil, err
	}
	c, err := azblob.NewClientWithNoCredential(blobURL+"/?"+sas, opts.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("azblobs: creating the blob client: %w", err)
	}
	return &Service{blobs: c}, nil
}

// mapError turns an SDK failure into the contract's errors (see azconn.MapError).
func mapError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	return azconn.MapError(ctx, "azblobs: "+op, err)
}
