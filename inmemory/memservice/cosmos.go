package memservice

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/unified-data/gotables/inmemory/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Cosmos makes the service behave as Azure Cosmos DB for Table where its FAQ says it differs
// from Table Storage (docs/cosmos.md):
//
//   - a PartitionKey or RowKey over 255 bytes is refused (service.CosmosMaxKeyBytes);
//   - a transaction whose body is over 2 MB is refused (service.CosmosMaxBodySize);
//   - table names compare with case: "Orders" and "orders" are two tables;
//   - the property names id, rid, etag and ResourceId are refused (service.CosmosReserved);
//   - a query without Top is not cut at 1,000 rows, and a Top above 1,000 is honoured;
//   - query results come in an order that is deterministic but not key order (by a hash of
//     the keys), so that code which assumes sorted results fails in tests.
//
// Where the FAQ does not say what Cosmos DB answers, the service answers with the code Table
// Storage gives for the same fault (400 PropertyValueTooLarge for a long key, 400
// PropertyNameInvalid for a reserved name, 413 RequestBodyTooLarge for a long body), so that
// code which handles one handles the other; the messages name the Cosmos DB limit.
// Everything else is Table Storage's behaviour. [Service.Product] then reports service.Cosmos,
// which accounts over the service read (tables.Account.Service).
func Cosmos() Option {
	return func(s *Service) { s.cosmos = true }
}

// Product reports the table service the memory service behaves as: service.Cosmos with
// the Cosmos option, otherwise service.Storage.
func (s *Service) Product() service.Product {
	if s.cosmos {
		return service.Cosmos
	}
	return service.Storage
}

// tableKey is the key of a table in s.tables: its name in lower case, or as given on Cosmos
// DB, whose table names compare with case.
func (s *Service) tableKey(name string) string {
	if s.cosmos {
		return name
	}
	return strings.ToLower(name)
}

// cosmosKeys refuses keys longer than Cosmos DB takes; nil on Table Storage.
func (s *Service) cosmosKeys(pk, rk string) error {
	if !s.cosmos {
		return nil
	}
	for _, k := range [...]struct{ param, key string }{{"PartitionKey", pk}, {"RowKey", rk}} {
		if len(k.key) > service.CosmosMaxKeyBytes {
			return statusError(http.StatusBadRequest, "PropertyValueTooLarge",
				fmt.Sprintf("The '%s' value exceeds the maximum allowed size (%d bytes).", k.param, service.CosmosMaxKeyBytes))
		}
	}
	return nil
}

// cosmosAction applies Cosmos DB's key and property-name rules to a write; nil on Table
// Storage.
func (s *Service) cosmosAction(a *service.Action) error {
	if !s.cosmos {
		return nil
	}
	if err := s.cosmosKeys(a.Row.PartitionKey, a.Row.RowKey); err != nil {
		return err
	}
	if a.Op == service.OpDelete {
		return nil
	}
	for i := range a.Row.Properties {
		if name := a.Row.Properties[i].Name; service.CosmosReserved(name) {
			return statusError(http.StatusBadRequest, "PropertyNameInvalid",
				fmt.Sprintf("The property name '%s' is reserved.", name))
		}
	}
	return nil
}

// cosmosTransaction applies Cosmos DB's body limit and each action's rules to a
// transaction; nil on Table Storage.
func (s *Service) cosmosTransaction(actions []service.Action) error {
	if !s.cosmos {
		return nil
	}
	if service.TransactionBodySize(actions) > service.CosmosMaxBodySize {
		return errBodyTooLarge()
	}
	for i := range actions {
		if err := s.cosmosAction(&actions[i]); err != nil {
			return txError(i, err)
		}
	}
	return nil
}

// cosmosTop is the rows a query page holds on Cosmos DB: Top when given (above 1,000 too),
// otherwise every match.
func cosmosTop(top int) int {
	if top == 0 {
		return math.MaxInt
	}
	return top
}

// cosmosOrder is a row's place in Cosmos DB's query order: a hash of its keys, then the
// keys, so that the order is fixed for a set of rows but is not key order.
type cosmosOrder struct {
	h      uint64
	pk, rk string
}

func orderOf(pk, rk string) cosmosOrder {
	h := fnv.New64a()
	h.Write([]byte(pk))
	h.Write([]byte{0})
	h.Write([]byte(rk))
	return cosmosOrder{h.Sum64(), pk, rk}
}

func (o cosmosOrder) compare(p cosmosOrder) int {
	return cmp.Or(cmp.Compare(o.h, p.h), strings.Compare(o.pk, p.pk), strings.Compare(o.rk, p.rk))
}

// cosmosPage is a query's page in Cosmos DB's order: the matching rows at or after the
// continuation's place (start, when cont), at most top of them. The caller holds t.mu for
// reading.
func cosmosPage(t *table, f *odata.Filter, only bool, pk string, start rowKey, cont bool, top int) service.Page {
	type hit struct {
		o cosmosOrder
		r service.Row // copied while the partition is locked, as the Storage scan copies
	}
	from := orderOf(start.pk, start.rk)
	var hits []hit
	t.scan(rowKey{}, only, pk, func(r *service.Row) bool {
		if f != nil && !f.Match(r) {
			return true
		}
		o := orderOf(r.PartitionKey, r.RowKey)
		if cont && o.compare(from) < 0 {
			return true
		}
		hits = append(hits, hit{o, *r})
		return true
	})
	slices.SortFunc(hits, func(a, b hit) int { return a.o.compare(b.o) })
	page := service.Page{Rows: make([]service.Row, 0, min(top, len(hits)))}
	for i, h := range hits {
		if i == top {
			page.Next = continuationAt(rowKey{h.r.PartitionKey, h.r.RowKey})
			break
		}
		page.Rows = append(page.Rows, h.r)
	}
	return page
}
