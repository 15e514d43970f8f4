package fidelity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/inmemory/emulator"
)

// BenchmarkEmulator measures the Go SDK's point insert, point read and 100-action
// transaction on the emulator (in this process, over loopback HTTP) and, when the
// environment names one, on Azurite, side by side:
//
//	go test -run '^$' -bench '^BenchmarkEmulator$' ./fidelity/
func BenchmarkEmulator(b *testing.B) {
	ends := map[string]string{"emulator": emulatorEndpoint(b)}
	if az := azuriteEndpoint(b); az != "" && os.Getenv(emulatorEnv) != "1" {
		ends["azurite"] = az
	}
	for _, name := range []string{"emulator", "azurite"} {
		ep, ok := ends[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) { benchTables(b, ep) })
	}
}

func benchTables(b *testing.B, endpoint string) {
	ctx := context.Background()
	sc := matrixClient(b, endpoint, emulator.DevelopmentKey)
	var r [4]byte
	_, _ = rand.Read(r[:])
	table := "bench" + hex.EncodeToString(r[:])
	if _, err := sc.CreateTable(ctx, table, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = sc.DeleteTable(context.Background(), table, nil) })
	tc := sc.NewClient(table)
	entity := func(pk string, i int) []byte {
		return fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":"r%08d","Name":"some text","N":%d,"L@odata.type":"Edm.Int64","L":"%d"}`, pk, i, i, i)
	}
	b.Run("insert", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := tc.AddEntity(ctx, entity("ins", i), nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	if _, err := tc.AddEntity(ctx, entity("read", 0), nil); err != nil {
		b.Fatal(err)
	}
	b.Run("point-read", func(b *testing.B) {
		for b.Loop() {
			if _, err := tc.GetEntity(ctx, "read", "r00000000", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transaction-100", func(b *testing.B) {
		n := 0
		for b.Loop() {
			actions := make([]aztables.TransactionAction, 100)
			for i := range actions {
				actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entity(fmt.Sprint("tx", n), i)}
			}
			n++
			if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
