package telemetry

import (
	"net/url"
	"strconv"
	"strings"

	otelattr "go.opentelemetry.io/otel/attribute"
)

// The values of db.system.name. The conventions register none for Azure Table Storage or
// Blob Storage; these follow the form of the registered cloud values (aws.dynamodb,
// azure.cosmosdb, gcp.spanner) with the names of the Azure SDK's packages (aztables,
// azblob). An account on Cosmos DB for Table is the registered azure.cosmosdb.
const (
	SystemTables = "azure.tables"
	SystemCosmos = "azure.cosmosdb"
	SystemBlob   = "azure.blob" // blob documents
)

// Endpoint is an account's service as the conventions' attributes name it, with those
// attributes built once for spans and metrics. A nil *Endpoint is an Azure Table Storage
// service of unknown address.
type Endpoint struct {
	System    string // db.system.name
	Namespace string // db.namespace: the storage account's name; "" when the endpoint does not say
	Address   string // server.address: the endpoint's host; "" in memory
	Port      int    // server.port: only a port other than the scheme's default

	span []Attribute
	kvs  []otelattr.KeyValue
}

// defaultEndpoint is what a Telemetry without an endpoint reports.
var defaultEndpoint = NewEndpoint("", SystemTables)

// NewEndpoint returns the endpoint of an account named name (its service URL, such as
// "https://myaccount.table.core.windows.net", or the name of an account that has none,
// such as "memory://account-1"). system is db.system.name; "" means SystemTables, or
// SystemCosmos when the host is Cosmos DB for Table's (*.table.cosmos.azure.com).
//
// The storage account's name is the first label of an Azure host (myaccount in
// myaccount.table.core.windows.net, myaccount.blob.core.windows.net or
// myaccount.table.cosmos.azure.com), or the first path segment of a path-style endpoint
// (the emulator's http://127.0.0.1:10002/devstoreaccount1); a custom domain names none.
func NewEndpoint(name, system string) *Endpoint {
	e := &Endpoint{System: system}
	if u, err := url.Parse(name); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
		host := u.Hostname()
		e.Address = host
		if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443" || u.Scheme == "http" && p == "80") {
			e.Port, _ = strconv.Atoi(p)
		}
		if seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/"); seg != "" {
			e.Namespace = seg
		} else if first, rest, ok := strings.Cut(host, "."); ok && (strings.HasPrefix(rest, "table.") || strings.HasPrefix(rest, "blob.")) {
			e.Namespace = first
		}
		if e.System == "" && strings.Contains(host, ".table.cosmos.") {
			e.System = SystemCosmos
		}
	}
	if e.System == "" {
		e.System = SystemTables
	}
	e.span = append(e.span, Attribute{Key: AttrSystem, Value: e.System})
	e.kvs = append(e.kvs, otelattr.String(AttrSystem, e.System))
	if e.Namespace != "" {
		e.span = append(e.span, Attribute{Key: AttrNamespace, Value: e.Namespace})
		e.kvs = append(e.kvs, otelattr.String(AttrNamespace, e.Namespace))
	}
	if e.Address != "" {
		e.span = append(e.span, Attribute{Key: AttrServerAddress, Value: e.Address})
		e.kvs = append(e.kvs, otelattr.String(AttrServerAddress, e.Address))
	}
	if e.Port != 0 {
		e.span = append(e.span, Attribute{Key: AttrServerPort, Value: e.Port})
		e.kvs = append(e.kvs, otelattr.Int(AttrServerPort, e.Port))
	}
	return e
}

// remote reports whether the service is reached over the network: its calls' spans are
// then of kind client, as the conventions ask; in memory they are internal.
func (e *Endpoint) remote() bool { return e.Address != "" }
