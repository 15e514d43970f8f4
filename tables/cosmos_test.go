package tables

import (
	"encoding/base64"
	"testing"

	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// An account tells Cosmos DB for Table from Table Storage by its endpoint, and
// Options.Service wins; spans and metrics say so in db.system.name.
func TestAccountService(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("k"))
	for _, tc := range []struct {
		name     string
		endpoint string
		given    service.Product
		want     service.Product
	}{
		{"storage", "https://acct.table.core.windows.net", 0, service.Storage},
		{"storage, China", "https://acct.table.core.chinacloudapi.cn", 0, service.Storage},
		{"emulator", "http://127.0.0.1:10002/devstoreaccount1", 0, service.Storage},
		{"cosmos", "https://acct.table.cosmos.azure.com:443/", 0, service.Cosmos},
		{"cosmos, China", "https://acct.table.cosmos.azure.cn", 0, service.Cosmos},
		{"cosmos, US Government", "https://acct.table.cosmos.usgovcloudapi.net", 0, service.Cosmos},
		{"cosmos emulator", "https://localhost:8902/", 0, service.Cosmos},
		{"override to cosmos", "http://127.0.0.1:10002/devstoreaccount1", service.Cosmos, service.Cosmos},
		{"override to storage", "https://acct.table.cosmos.azure.com", service.Storage, service.Storage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAccount("AccountName=acct;AccountKey="+key+";TableEndpoint="+tc.endpoint, &Options{Service: tc.given})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Service(); got != tc.want {
				t.Fatalf("Service() = %v, want %v", got, tc.want)
			}
			system := telemetry.SystemTables
			if tc.want == service.Cosmos {
				system = telemetry.SystemCosmos
			}
			if got := a.e.Tel.Endpoint.System; got != system {
				t.Fatalf("db.system.name = %q, want %q", got, system)
			}
			wantBody := service.MaxBodySize
			if tc.want == service.Cosmos {
				wantBody = service.CosmosMaxBodySize
			}
			if got := a.e.MaxBody(); got != wantBody {
				t.Fatalf("transactions planned within %d bytes, want %d", got, wantBody)
			}
		})
	}
	// Over another service, the name tells, unless the options say.
	if got := NewAccountOver("https://acct.table.cosmos.azure.com", nil, nil, nil).Service(); got != service.Cosmos {
		t.Errorf("NewAccountOver, Cosmos name: %v", got)
	}
	if got := NewAccountOver("memory://x", nil, nil, &Options{Service: service.Cosmos}).Service(); got != service.Cosmos {
		t.Errorf("NewAccountOver, Options.Service: %v", got)
	}
	if got := NewAccountOver("memory://x", nil, nil, nil).Service(); got != service.Storage {
		t.Errorf("NewAccountOver, memory: %v", got)
	}
	if s := service.Cosmos.String(); s != "Azure Cosmos DB for Table" {
		t.Errorf("String() = %q", s)
	}
}
