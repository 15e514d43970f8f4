package azconn

import (
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

func TestProductOf(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		want     service.Product
	}{
		{"https://acct.table.core.windows.net", service.Storage},
		{"https://acct.table.core.chinacloudapi.cn/", service.Storage},
		{"https://acct.table.core.usgovcloudapi.net", service.Storage},
		{"http://127.0.0.1:10002/devstoreaccount1", service.Storage},
		{"http://localhost:10002/devstoreaccount1", service.Storage},
		{"https://tables.example.com/cosmos", service.Storage},
		{"https://acct.table.cosmos.azure.com", service.Cosmos},
		{"https://ACCT.Table.Cosmos.Azure.Com:443/", service.Cosmos},
		{"https://acct.table.cosmos.azure.cn", service.Cosmos},
		{"https://acct.table.cosmos.usgovcloudapi.net", service.Cosmos},
		{"https://acct.table.cosmosdb.azure.com", service.Cosmos},
		{"https://localhost:8902/", service.Cosmos},
		{"https://127.0.0.1:8902/", service.Storage}, // the SDK knows the emulator as localhost only
		{"not a url\x7f", service.Storage},
	} {
		if got := ProductOf(tc.endpoint); got != tc.want {
			t.Errorf("ProductOf(%q) = %v, want %v", tc.endpoint, got, tc.want)
		}
	}
}
