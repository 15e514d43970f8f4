package azservice

import (
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Service is the table service of one Azure Storage account (or Azurite), reached through
// the Azure SDK. It implements service.Tables and is safe for concurrent use.
type Service struct {
	tables   *aztables.ServiceClient
	rows     *rowClient // entity requests (pipeline.go); nil sends them through aztables
	endpoint string
}

var _ service.Tables = (*Service)(nil)

// Options configure the clients a constructor builds. A nil *Options, like the zero value,
// means the SDK's defaults.
type Options struct {
	// ClientOptions are the Azure SDK's client options: transport, retries, per-call and
	// per-retry policies, logging, telemetry and tracing. They apply to aztables' client
	// (tables, queries, transactions), to which the constructors add the package's own
	// policy (the read tap) after the per-call ones given here, and to the pipeline of the
	// entity requests (point reads and row writes), which the package sends itself. Both
	// get a policy after the per-retry ones given here that takes the query (a SAS) off the
	// URL of a transport failure before the SDK's retry policy logs it.
	ClientOptions azcore.ClientOptions
}

// clientOptions returns the table client's options: the caller's, with the transaction
// bodies (see Transact) before them, so that they see the body that is sent, and the read
// tap after them, per-retry policies that count each try and hand bodies over in memory
// (eachTry) and take a SAS off the URL of a transport failure (azconn.Redacting), and for
// the emulator (see
// asciiBodies) the ASCII rewrite of request bodies.
func (o *Options) clientOptions(emulator bool) *aztables.ClientOptions {
	co := &aztables.ClientOptions{}
	if o != nil {
		co.ClientOptions = o.ClientOptions
	}
	co.PerCallPolicies = append(append([]policy.Policy{batchBodies{}}, co.PerCallPolicies...), bodyTap{})
	co.PerRetryPolicies = append(append([]policy.Policy(nil), co.PerRetryPolicies...), &eachTry{})
	co.ClientOptions = azconn.Redacting(co.ClientOptions)
	if emulator {
		co.PerCallPolicies = append(co.PerCallPolicies, asciiBodies{})
	}
	return co
}

// NewFromConnectionString returns the Service of an Azure Storage connection string with an
// AccountKey or a SharedAccessSignature, including "UseDevelopmentStorage=true", which stands
// for Azurite on its default loopback ports with the well-known development account. A
// string that names no table endpoint is refused. With the emulator's development account
// (devstoreaccount1) the text of entity writes is sent as ASCII escapes, which Azurite
// stores correctly where it may corrupt raw multi-byte characters (see the package doc). Errors match
// abstractions.ErrInvalidArgument and name the faulty setting, never a key or a signature.
func NewFromConnectionString(conn string, opts *Options) (*Service, error) {
	cs, err := azconn.Parse(conn)
	if err != nil {
		return nil, err
	}
	if cs.TableURL == "" {
		return nil, azconn.NoEndpoint("table")
	}
	s := &Service{endpoint: cs.TableURL}
	emulator := cs.AccountName == azconn.DevAccountName
	if cs.AccountKey != "" {
		cred, err := aztables.NewSharedKeyCredential(cs.AccountName, cs.AccountKey)
		if err != nil {
			return nil, fmt.Errorf("%w: AccountKey is not usable", azconn.ErrConnString)
		}
		if s.tables, err = aztables.NewServiceClientWithSharedKey(cs.TableURL, cred, opts.clientOptions(emulator)); err != nil {
			return nil, fmt.Errorf("azservice: creating the table client: %w", err)
		}
		key, err := base64.StdEncoding.DecodeString(cs.AccountKey)
		if err != nil {
			return nil, fmt.Errorf("%w: AccountKey is not usable", azconn.ErrConnString)
		}
		if s.rows, err = newRowClient(cs.TableURL, "", credential{account: cs.AccountName, key: key}, opts, emulator); err != nil {
			return nil, fmt.Errorf("azservice: creating the table client: %w", err)
		}
		return s, nil
	}
	if s.tables, err = aztables.NewServiceClientWithNoCredential(cs.TableURL+"/?"+cs.SAS, opts.clientOptions(emulator)); err != nil {
		return nil, fmt.Errorf("azservice: creating the table client: %w", err)
	}
	if s.rows, err = newRowClient(cs.TableURL, cs.SAS, credential{}, opts, emulator); err != nil {
		return nil, fmt.Errorf("azservice: creating the table client: %w", err)
	}
	return s, nil
}

// NewWithCredential returns the Service at tableURL (such as
// "https://myaccount.table.core.windows.net") authenticated with a token credential, for
// example one of package azidentity. A nil credential, or a URL that is not http(s) with a
// host and without a query or user information, is refused with
// abstractions.ErrInvalidArgument.
func NewWithCredential(tableURL string, cred azcore.TokenCredential, opts *Options) (*Service, error) {
	if cred == nil {
		return nil, fmt.Errorf("%w: azservice: the credential is nil", abstractions.ErrInvalidArgument)
	}
	if err := CheckEndpoint("table", tableURL); err != nil {
		return nil, err
	}
	tc, err := aztables.NewServiceClient(tableURL, cred, opts.clientOptions(false))
	if err != nil {
		return nil, fmt.Errorf("azservice: creating the table client: %w", err)
	}
	rows, err := newRowClient(tableURL, "", credential{token: cred}, opts, false)
	if err != nil {
		return nil, fmt.Errorf("azservice: creating the table client: %w", err)
	}
	return &Service{tables: tc, rows: rows, endpoint: tableURL}, nil
}

// CheckEndpoint returns an error matching abstractions.ErrInvalidArgument when u is not an
// endpoint a credential may be sent to: an http or https URL with a host, and without user
// information, a query or a fragment. which names the service in the message.
func CheckEndpoint(which, u string) error {
	p, err := url.Parse(u)
	switch {
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
		return fmt.Errorf("%w: the %s endpoint is not an http or https URL with a host", abstractions.ErrInvalidArgument, which)
	case p.User != nil:
		return fmt.Errorf("%w: the %s endpoint must not carry user information", abstractions.ErrInvalidArgument, which)
	case p.RawQuery != "" || p.Fragment != "":
		return fmt.Errorf("%w: the %s endpoint must not carry a query or a fragment", abstractions.ErrInvalidArgument, which)
	}
	return nil
}

// Endpoint names the account: the table endpoint URL, never with a signature.
func (s *Service) Endpoint() string { return s.endpoint }

// RetriesLikeSDK reports true: the Azure SDK's pipeline retries every request
// (attempt.SDKRetrier), so an account built over the service adds no retries of its own.
func (s *Service) RetriesLikeSDK() bool { return true }
