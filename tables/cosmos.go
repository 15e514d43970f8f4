package tables

import (
	"context"
	"fmt"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
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

// productOf resolves the service of an account named name (its endpoint) over tables.
func productOf(name string, tables service.Tables, given service.Product) service.Product {
	if given == service.Storage || given == service.Cosmos {
		return given
	}
	if p, ok := tables.(interface{ Product() service.Product }); ok {
		if got := p.Product(); got == service.Storage || got == service.Cosmos {
			return got
		}
	}
	return azconn.ProductOf(name)
}

// cosmosTables refuses, before sending, the requests Azure Cosmos DB for Table would refuse
// where Table Storage would not: a key over 255 bytes, a property name Cosmos DB reserves
// and a transaction body over 2 MB. Every row the library writes (the user's, and its own
// index, feed and continuation rows) passes through it, so one check covers them all.
type cosmosTables struct {
	service.Tables
}

// cosmosRefusal is the error of a request cosmosTables refuses.
func cosmosRefusal(table, pk, rk, msg string) error {
	return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Table: table, PartitionKey: pk, RowKey: rk,
		Message: msg + "; nothing was sent"}
}

// checkKeys refuses keys Cosmos DB for Table cannot store.
func (cosmosTables) checkKeys(table, pk, rk string) error {
	for _, k := range [...]struct{ name, key string }{{"partition key", pk}, {"row key", rk}} {
		if len(k.key) > service.CosmosMaxKeyBytes {
			return cosmosRefusal(table, pk, rk, fmt.Sprintf("the %s is %d bytes long; Azure Cosmos DB for Table takes keys of at most %d bytes (Table Storage: 1 KiB)",
				k.name, len(k.key), service.CosmosMaxKeyBytes))
		}
	}
	return nil
}

// checkAction refuses a write Cosmos DB for Table cannot take: its keys, and its property
// names.
func (c cosmosTables) checkAction(table string, a *service.Action) error {
	if err := c.checkKeys(table, a.Row.PartitionKey, a.Row.RowKey); err != nil {
		return err
	}
	for i := range a.Row.Properties {
		if name := a.Row.Properties[i].Name; service.CosmosReserved(name) {
			return cosmosRefusal(table, a.Row.PartitionKey, a.Row.RowKey, fmt.Sprintf(
				"the property name %q is reserved by Azure Cosmos DB for Table (id, rid, etag and ResourceId are); rename the field (a column is named after its field)", name))
		}
	}
	return nil
}

func (c cosmosTables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	if err := c.checkKeys(table, pk, rk); err != nil {
		return service.Row{}, err
	}
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c cosmosTables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if err := c.checkAction(table, &a); err != nil {
		return service.Written{}, err
	}
	return c.Tables.Write(ctx, table, a)
}

func (c cosmosTables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	for i := range actions {
		if err := c.checkAction(table, &actions[i]); err != nil {
			return nil, err
		}
	}
	if n := service.TransactionBodySize(actions); n > service.CosmosMaxBodySize {
		pk := ""
		if len(actions) > 0 {
			pk = actions[0].Row.PartitionKey
		}
		return nil, cosmosRefusal(table, pk, "", fmt.Sprintf(
			"the transaction's request body would be about %d bytes; Azure Cosmos DB for Table takes at most 2 MB (%d bytes) in one (Table Storage: 4 MiB)",
			n, service.CosmosMaxBodySize))
	}
	return c.Tables.Transact(ctx, table, actions)
}
