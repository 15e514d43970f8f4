package memservice

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

// row is a row of the Cosmos profile's tests, with one string property.
func cosmosRow(pk, rk string, props ...service.Property) service.Row {
	if props == nil {
		props = []service.Property{{Name: "V", Value: service.String("v")}}
	}
	return service.Row{PartitionKey: pk, RowKey: rk, Properties: props}
}

func newCosmos(t *testing.T, table string) *Service {
	t.Helper()
	s := New(Cosmos())
	if err := s.CreateTable(context.Background(), table); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCosmosProduct(t *testing.T) {
	if p := New().Product(); p != service.Storage {
		t.Errorf("New().Product() = %v", p)
	}
	if p := New(Cosmos()).Product(); p != service.Cosmos {
		t.Errorf("New(Cosmos()).Product() = %v", p)
	}
}

func TestCosmosKeysUpTo255Bytes(t *testing.T) {
	ctx := context.Background()
	s := newCosmos(t, "keys")
	ok := strings.Repeat("k", service.CosmosMaxKeyBytes)
	long := ok + "k"
	if _, err := s.Write(ctx, "keys", service.Action{Op: service.OpInsert, Row: cosmosRow(ok, ok)}); err != nil {
		t.Fatalf("255-byte keys: %v", err)
	}
	for _, r := range []service.Row{cosmosRow("p", long), cosmosRow(long, "r")} {
		_, err := s.Write(ctx, "keys", service.Action{Op: service.OpInsert, Row: r})
		wantStatus(t, err, http.StatusBadRequest, "PropertyValueTooLarge")
	}
	// Bytes, not UTF-16 units: 128 two-byte characters are 256 bytes.
	_, err := s.Write(ctx, "keys", service.Action{Op: service.OpUpsertReplace, Row: cosmosRow("p", strings.Repeat("é", 128))})
	wantStatus(t, err, http.StatusBadRequest, "PropertyValueTooLarge")
	_, err = s.GetRow(ctx, "keys", "p", long, nil)
	wantStatus(t, err, http.StatusBadRequest, "PropertyValueTooLarge")
	// Table Storage takes them.
	st := New()
	_ = st.CreateTable(ctx, "keys")
	if _, err := st.Write(ctx, "keys", service.Action{Op: service.OpInsert, Row: cosmosRow("p", long)}); err != nil {
		t.Fatalf("Table Storage, 256-byte key: %v", err)
	}
}

func TestCosmosTransactionUpTo2MB(t *testing.T) {
	ctx := context.Background()
	s := newCosmos(t, "big")
	value := strings.Repeat("x", 30000)
	var acts []service.Action
	for i := 0; i < 80; i++ { // 80 rows of 30,000 characters: about 2.4 MB
		acts = append(acts, service.Action{Op: service.OpInsert, Row: cosmosRow("p", fmt.Sprint(i),
			service.Property{Name: "V", Value: service.String(value)})})
	}
	_, err := s.Transact(ctx, "big", acts)
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	if _, err := s.Transact(ctx, "big", acts[:60]); err != nil { // about 1.8 MB
		t.Fatalf("1.8 MB transaction: %v", err)
	}
	st := New()
	_ = st.CreateTable(ctx, "big")
	if _, err := st.Transact(ctx, "big", acts); err != nil {
		t.Fatalf("Table Storage, 2.4 MB transaction: %v", err)
	}
}

// Binary values count at their base64 length on Cosmos DB: 15 cells of 64,000 bytes fit
// Table Storage's 1 MiB and not Cosmos DB's, in a write, a merge and a transaction.
func TestCosmosBinaryCountsLarger(t *testing.T) {
	ctx := context.Background()
	var props []service.Property
	for i := range 15 {
		props = append(props, service.Property{Name: fmt.Sprintf("B%d", i), Value: service.Binary(make([]byte, 64000))})
	}
	row := cosmosRow("p", "r", props...)
	if n, m := service.EntitySize("p", "r", props), service.EntitySizeOn(service.Cosmos, "p", "r", props); n > 1<<20 || m <= 1<<20 {
		t.Fatalf("sizes %d (Table Storage), %d (Cosmos DB): the test needs a row between the two counts", n, m)
	}
	st := New()
	_ = st.CreateTable(ctx, "bin")
	if _, err := st.Write(ctx, "bin", service.Action{Op: service.OpInsert, Row: row}); err != nil {
		t.Fatalf("Table Storage: %v", err)
	}
	s := newCosmos(t, "bin")
	_, err := s.Write(ctx, "bin", service.Action{Op: service.OpInsert, Row: row})
	wantStatus(t, err, http.StatusBadRequest, "EntityTooLarge")
	_, err = s.Transact(ctx, "bin", []service.Action{{Op: service.OpInsert, Row: row}})
	wantTx(t, err, 0, http.StatusBadRequest, "EntityTooLarge")
	half := cosmosRow("p", "r", props[:8]...)
	if _, err := s.Write(ctx, "bin", service.Action{Op: service.OpInsert, Row: half}); err != nil {
		t.Fatalf("half the row: %v", err)
	}
	_, err = s.Write(ctx, "bin", service.Action{Op: service.OpMerge, Row: cosmosRow("p", "r", props[8:]...), IfMatch: service.ETagAny})
	wantStatus(t, err, http.StatusBadRequest, "EntityTooLarge")
}

func TestCosmosReservedPropertyNames(t *testing.T) {
	ctx := context.Background()
	s := newCosmos(t, "names")
	for _, name := range []string{"id", "rid", "etag", "ResourceId"} {
		r := cosmosRow("p", "r", service.Property{Name: name, Value: service.String("x")})
		_, err := s.Write(ctx, "names", service.Action{Op: service.OpUpsertMerge, Row: r})
		wantStatus(t, err, http.StatusBadRequest, "PropertyNameInvalid")
		_, err = s.Transact(ctx, "names", []service.Action{{Op: service.OpInsert, Row: cosmosRow("p", "a")}, {Op: service.OpInsert, Row: r}})
		wantTx(t, err, 1, http.StatusBadRequest, "PropertyNameInvalid")
	}
	// Names compare with case: the library's own Id column is not reserved.
	if _, err := s.Write(ctx, "names", service.Action{Op: service.OpInsert, Row: cosmosRow("p", "r", service.Property{Name: "Id", Value: service.String("p|r")})}); err != nil {
		t.Fatalf("Id: %v", err)
	}
}

func TestCosmosTableNamesCaseSensitive(t *testing.T) {
	ctx := context.Background()
	s := newCosmos(t, "Orders")
	if ok, _ := s.TableExists(ctx, "orders"); ok {
		t.Fatal("orders exists on Cosmos DB after creating Orders")
	}
	if err := s.CreateTable(ctx, "orders"); err != nil {
		t.Fatalf("CreateTable(orders) beside Orders: %v", err)
	}
	if _, err := s.Write(ctx, "Orders", service.Action{Op: service.OpInsert, Row: cosmosRow("p", "r")}); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetRow(ctx, "orders", "p", "r", nil)
	wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
	if err := s.DeleteTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRow(ctx, "Orders", "p", "r", nil); err != nil {
		t.Fatalf("Orders after deleting orders: %v", err)
	}
}

// The profile's pages hold every match unless Top says otherwise, in an order that is fixed
// but not key order, and continuations walk that order without loss or repetition.
func TestCosmosPagesNotInKeyOrder(t *testing.T) {
	ctx := context.Background()
	s := newCosmos(t, "pages")
	var want []string
	for i := 0; i < 1500; i++ {
		pk := fmt.Sprintf("p%d", i%3)
		rk := fmt.Sprintf("%05d", i)
		want = append(want, pk+"/"+rk)
		if _, err := s.Write(ctx, "pages", service.Action{Op: service.OpInsert, Row: cosmosRow(pk, rk)}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	page, err := s.Query(ctx, "pages", service.Query{})
	if err != nil || len(page.Rows) != 1500 || page.Next != nil {
		t.Fatalf("a query without Top: %d rows, next %v, %v", len(page.Rows), page.Next, err)
	}
	keys := func(rows []service.Row) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.PartitionKey+"/"+r.RowKey)
		}
		return out
	}
	all := keys(page.Rows)
	if slices.IsSorted(all) {
		t.Fatal("the Cosmos profile answered in key order")
	}
	again, _ := s.Query(ctx, "pages", service.Query{})
	if !slices.Equal(all, keys(again.Rows)) {
		t.Fatal("the order changed between two queries")
	}
	// Pages of 100 by continuation: the same rows in the same order.
	var paged []string
	q := service.Query{Top: 100}
	for {
		p, err := s.Query(ctx, "pages", q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, keys(p.Rows)...)
		if p.Next == nil {
			break
		}
		q.Continuation = p.Next
	}
	if !slices.Equal(all, paged) {
		t.Fatalf("paged walk differs: %d rows", len(paged))
	}
	// One partition's rows, filtered, are not in row-key order either.
	p1, err := s.Query(ctx, "pages", service.Query{Filter: "PartitionKey eq 'p1'"})
	if err != nil || len(p1.Rows) != 500 || slices.IsSorted(keys(p1.Rows)) {
		t.Fatalf("partition p1: %d rows, sorted %v, %v", len(p1.Rows), slices.IsSorted(keys(p1.Rows)), err)
	}
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatal("the profile lost or repeated rows")
	}
}
