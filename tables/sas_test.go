package tables_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/internal/azconn"
)

// A least-privilege credential: a SAS scoped to one table with read, add, update and delete
// permissions, and no right to create tables. With NeverCreateTables, reads and writes of
// the existing table work, and nothing asks to create a table.
func TestTableSASWithoutCreate(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	cs, err := azconn.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	table := "Sas" + hex.EncodeToString(b[:])

	admin, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	adminStore, err := tables.For[Customer](admin, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := adminStore.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Tables().DeleteTable(context.Background(), table) }()

	cred, err := aztables.NewSharedKeyCredential(cs.AccountName, cs.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	perms := aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}
	sas, err := aztables.SASSignatureValues{
		TableName: table, Permissions: perms.String(),
		StartTime: time.Now().Add(-time.Minute), ExpiryTime: time.Now().Add(time.Hour),
	}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	sasConn := "TableEndpoint=" + cs.TableURL + ";SharedAccessSignature=" + sas

	acct, err := tables.NewAccount(sasConn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t), NeverCreateTables: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tables.For[Customer](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatalf("EnsureCreated checks the table with a read: %v", err)
	}
	if _, err := s.One(ctx, "eu|ann"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("One of a missing row: %v", err)
	}
	if n, err := s.Count(ctx, "eu"); err != nil || n != 0 {
		t.Fatalf("Count: %d, %v", n, err)
	}
	c := &Customer{Entity: abstractions.Entity{ID: "eu|ann"}, Name: "Ann"}
	if err := s.Create(ctx, c); err != nil {
		t.Fatalf("Create: %v", err)
	}
	c.Balance = 5
	if err := s.Update(ctx, c, abstractions.Strict); err != nil {
		t.Fatalf("Update: %v", err)
	}
	for _, id := range []string{"eu|bob", "eu|cy"} {
		if err := s.Upsert(ctx, &Customer{Entity: abstractions.Entity{ID: id}}); err != nil {
			t.Fatalf("Upsert: %v", err)
		}
	}
	if got, err := s.One(ctx, "eu|ann"); err != nil || got.Balance != 5 {
		t.Fatalf("One: %+v, %v", got, err)
	}
	// Azurite 3.35 refuses an entity-group transaction under a table SAS (the $batch
	// request names no table): 403 AuthorizationFailure. Batches and DeletePartition need
	// an account key or an account SAS there.
	if _, err := s.UpsertBatch(ctx, []*Customer{{Entity: abstractions.Entity{ID: "eu|dee"}}}); !abstractions.HasStatus(err, http.StatusForbidden, "") {
		t.Errorf("UpsertBatch under a table SAS on Azurite: %v, want 403", err)
	}
	for _, id := range []string{"eu|ann", "eu|bob", "eu|cy"} {
		if deleted, err := s.Delete(ctx, id, ""); err != nil || !deleted {
			t.Fatalf("Delete %s: %v, %v", id, deleted, err)
		}
	}
	if n, err := s.Count(ctx, "eu"); err != nil || n != 0 {
		t.Fatalf("Count after the deletes: %d, %v", n, err)
	}

	// Without NeverCreateTables the same credential works too while the table exists:
	// reads never create tables, and a write creates one only when it finds it missing.
	plain, err := tables.NewAccount(sasConn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := tables.For[Customer](plain, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps.One(ctx, "eu|ann"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("One through a default account: %v", err)
	}
	if err := ps.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|eve"}}); err != nil {
		t.Fatalf("Create through a default account: %v", err)
	}
	if _, err := ps.Delete(ctx, "eu|eve", ""); err != nil {
		t.Fatal(err)
	}

	// The SAS really cannot create tables: a store of another table fails as a missing
	// table, and the service refuses an explicit create.
	other, err := tables.For[Customer](acct, &tables.StoreOptions{Table: table + "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Create(ctx, c); !errors.Is(err, abstractions.ErrNotFound) && !abstractions.HasStatus(err, http.StatusForbidden, "") {
		t.Fatalf("a write to a table outside the SAS: %v", err)
	}
	if err := acct.Tables().CreateTable(ctx, table+"y"); !abstractions.HasStatus(err, http.StatusForbidden, "") {
		t.Errorf("Create Table with the SAS: %v, want 403", err)
	}
}
