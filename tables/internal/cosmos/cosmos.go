// Package cosmos holds what the tables module does because the account talks to Azure
// Cosmos DB for Table rather than Table Storage: which service an account talks to
// (Product), and a table service that refuses, before sending, the requests Cosmos DB would
// refuse where Table Storage would not (Tables). docs/cosmos.md lists every difference.
package cosmos

import (
	"context"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Product resolves the service of an account named name (its endpoint) over tables.
func Product(name string, tables service.Tables, given service.Product) service.Product {
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

// Tables refuses, before sending, the requests Azure Cosmos DB for Table would refuse
// where Table Storage would not: a key over 255 bytes, a property name Cosmos DB reserves
// and a transaction body over 2 MB. Every row the library writes (the user's, and its own
// index, feed and continuation rows) passes through it, so one check covers them all.
type Tables struct {
	service.Tables
}

// refusal is the error of a request Tables refuses.
func refusal(table, pk, rk, msg string) error {
	return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Table: table, PartitionKey: pk, RowKey: rk,
		Message: msg + "; nothing was sent"}
}

// checkKeys refuses keys Cosmos DB for Table cannot store.
func (Tables) checkKeys(table, pk, rk string) error {
	for _, k := range [...]struct{ name, key string }{{"partition key", pk}, {"row key", rk}} {
		if len(k.key) > service.CosmosMaxKeyBytes {
			return refusal(table, pk, rk, fmt.Sprintf("the %s is %d bytes long; Azure Cosmos DB for Table takes keys of at most %d bytes (Table Storage: 1 KiB)",
				k.name, len(k.key), service.CosmosMaxKeyBytes))
		}
	}
	return nil
}

// checkAction refuses a write Cosmos DB for Table cannot take: its keys, and its property
// names.
func (c Tables) checkAction(table string, a *service.Action) error {
	if err := c.checkKeys(table, a.Row.PartitionKey, a.Row.RowKey); err != nil {
		return err
	}
	for i := range a.Row.Properties {
		if name := a.Row.Properties[i].Name; service.CosmosReserved(name) {
			return refusal(table, a.Row.PartitionKey, a.Row.RowKey, fmt.Sprintf(
				"the property name %q is reserved by Azure Cosmos DB for Table (id, rid, etag and ResourceId are); rename the field (a column is named after its field)", name))
		}
	}
	return nil
}

func (c Tables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	if err := c.checkKeys(table, pk, rk); err != nil {
		return service.Row{}, err
	}
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c Tables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if err := c.checkAction(table, &a); err != nil {
		return service.Written{}, err
	}
	return c.Tables.Write(ctx, table, a)
}

func (c Tables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
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
		return nil, refusal(table, pk, "", fmt.Sprintf(
			"the transaction's request body would be about %d bytes; Azure Cosmos DB for Table takes at most 2 MB (%d bytes) in one (Table Storage: 4 MiB)",
			n, service.CosmosMaxBodySize))
	}
	return c.Tables.Transact(ctx, table, actions)
}
