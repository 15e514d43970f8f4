package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
)

// A test of code near the service's limits: the memory service throttles at a low rate
// (memservice.AzureTargets holds Azure's own), and the account retries the 503 ServerBusy
// answers with the Azure SDK's backoff, here with a short base delay so the test is quick.
// A bulk write that is refused part-way is absorbed; one that still fails says, with a
// BatchError, which partitions and rows committed.
func ExampleNewAccountOver_throttled() {
	ctx := context.Background()
	svc := memservice.New(memservice.WithThrottling(memservice.Throttling{
		PartitionRate: 1000, Burst: 100 * time.Millisecond, // 100 entities at once, 1,000 a second
	}))
	acct := inmemory.NewAccountOver(svc, svc, &tables.Options{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{RetryDelay: 140 * time.Millisecond}},
	})
	customers, err := tables.For[Customer](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	var batch []*Customer
	for i := range 500 {
		batch = append(batch, &Customer{Entity: abstractions.Entity{ID: fmt.Sprintf("hot|%03d", i)}})
	}
	n, err := customers.UpsertBatch(ctx, batch)
	var be *abstractions.BatchError
	if errors.As(err, &be) {
		fmt.Println("retry these:", be.Retry())
	}
	fmt.Println("wrote", n, "rows; error:", err, "; throttled:", svc.Throttled() > 0)
	// Output:
	// wrote 500 rows; error: <nil> ; throttled: true
}
