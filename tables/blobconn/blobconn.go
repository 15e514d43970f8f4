// Package blobconn names how an account gets its blob service: the endpoint and credential
// an account's constructor hands to a [Connector], such as azblobs.Connect. It holds types
// only, so that a program that never uses blobs links no blob SDK: the Azure blob service
// comes into a program only with package tables/azblobs.
package blobconn

import (
	"log/slog"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/tables/service"
)

// A Connector builds an account's blob service from what the account's constructor was
// given (tables.Options.Blobs). azblobs.Connect is the one programs use.
type Connector func(Endpoint) (service.Blobs, error)

// Endpoint is where an account's blob service is and how to reach it. Exactly one of
// the credentials is set. Its String method, and slog through LogValue, never show the key
// or the signature.
type Endpoint struct {
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
func (e Endpoint) String() string {
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
func (e Endpoint) GoString() string { return "blobconn.Endpoint(" + e.String() + ")" }

// LogValue is String, for log/slog.
func (e Endpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }
