package tables

import (
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// Service returns the table service the account talks to: service.Cosmos for Azure Cosmos
// DB for Table, service.Storage for Azure Table Storage, Azurite and the default in-memory
// service. Options.Service decides when set; otherwise a service that says what it is (the
// in-memory service with memservice.Cosmos) does, and then the endpoint (see
// docs/cosmos.md).
func (a *Account) Service() service.Product { return a.product }

// tableKey is how the account tells tables apart: by name without regard to case on Table
// Storage, with case on Cosmos DB for Table.
func (a *Account) tableKey(table string) string {
	if a.product == service.Cosmos {
		return table
	}
	return strings.ToLower(table)
}
