package azconn

import (
	"net/url"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// ProductOf tells from a table endpoint which service it is, as the Azure SDK's aztables
// (v1.4.1, service_client.go, isCosmosEndpoint, with the domains of constants.go) tells a
// Cosmos DB endpoint, whose requests it rewrites: a host with ".table.cosmos." in it (the
// public cloud's *.table.cosmos.azure.com and the sovereign clouds' *.table.cosmos.azure.cn
// and *.table.cosmos.usgovcloudapi.net), the legacy ".table.cosmosdb." domain, or the Cosmos
// DB emulator on localhost port 8902. The SDK matches these strings anywhere in the URL;
// this matches them in the host only, so that a table or path named "cosmos" does not count.
// Anything else, Azurite and custom domains included, is service.Storage.
func ProductOf(endpoint string) service.Product {
	u, err := url.Parse(endpoint)
	if err != nil {
		return service.Storage
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case strings.Contains(host, ".table.cosmos."), strings.Contains(host, ".table.cosmosdb."),
		host == "localhost" && u.Port() == "8902":
		return service.Cosmos
	}
	return service.Storage
}
