package azconn

import (
	"log/slog"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/tables/service"
)

// A BlobConnector builds an account's blob service from what the account's constructor was
// given (tables.Options.Blobs). azblobs.Connect is the one programs use.
type BlobConnector func(BlobEndpoint) (service.Blobs, error)

// BlobEndpoint is where an account's blob service is and how to reach it. Exactly one of
// the credentials is set. Its String method, and slog through LogValue, never show the key
// or the signature.
type BlobEndpoint struct {
	// URL is the blob service endpoint, such as "https://myaccount.blob.core.windows.net",
	// without a query.
	URL string
	// AccountName and AccountKey are the account's shared key, when it uses one.
	AccountName, AccountKey string
	// SAS is the shared access signature, without its "?", when the account uses one.
	SAS string
	// Credential is the token credential, when the account uses one.
	Credential azcore.TokenCredential
	// ClientOptions are the account's Options.ClientOptions.
	ClientOptions azcore.ClientOptions
}

// String describes the endpoint without its secrets.
func (e BlobEndpoint) String() string {
	auth := "no credential"
	switch {
	case e.Credential != nil:
		auth = "a token credential"
	case e.AccountKey != "":
		auth = "the shared key of " + e.AccountName
	case e.SAS != "":
		auth = "a shared access signature"
	}
	return e.URL + " with " + auth
}

// GoString is String, so that %#v does not print the secrets either.
func (e BlobEndpoint) GoString() string { return "azconn.BlobEndpoint(" + e.String() + ")" }

// LogValue is String, for log/slog.
func (e BlobEndpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }
