package shop

import (
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tools/examples/shop/domain"
)

// OrdersTable is the table the shop keeps its orders in.
const OrdersTable = "ShopOrders"

// Orders returns the store of the shop's orders in acct: the one place the store is wired,
// for the server's Azure account and the tests' in-memory one alike (inmemory.NewAccount
// returns the same *tables.Account). table names the table; "" is OrdersTable, which the
// server uses, and tests that share one emulator pass a table of their own.
func Orders(acct *tables.Account, table string) (*tables.Store[domain.Order], error) {
	if table == "" {
		table = OrdersTable
	}
	return tables.For[domain.Order](acct, &tables.StoreOptions{Table: table})
}
