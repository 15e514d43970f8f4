package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/index"
)

// IndexedOrder is Order with a partition index on Sequence, a number unique in its
// partition: the index workloads compare its writes with Order's and its lookups with a
// filtered scan.
type IndexedOrder struct {
	abstractions.Entity
	Customer string
	Status   string
	Notes    string
	Quantity int32
	Sequence int64 `table:",index=seq"`
	Amount   float64
	Paid     bool
}

func newIndexedOrder(partition, rowKey string, i int) *IndexedOrder {
	o := newOrder(partition, rowKey, i)
	return &IndexedOrder{Entity: o.Entity, Customer: o.Customer, Status: o.Status, Notes: o.Notes,
		Quantity: o.Quantity, Sequence: o.Sequence, Amount: o.Amount, Paid: o.Paid}
}

var indexedSequence = abstractions.Field(func(o *IndexedOrder) *int64 { return &o.Sequence })

// Targets of the index workloads.
const (
	// targetIndexedWrite: a partition index costs no extra round trip.
	targetIndexedWrite = "ratio <= 1.15"
	indexedWriteRatio  = 1.15
)

// indexWorkloads compare an indexed store's writes with the same writes of the unindexed
// store (the raw side), and a lookup through the index with a filtered scan of the same
// CountRows-row partition of the same table. indexed is a store of its own table, which they
// seed; rawIndexed is the raw SDK's client of that table.
func (s *sides) indexWorkloads(ctx context.Context, cfg Config, indexed *tables.Store[IndexedOrder], rawIndexed *aztables.Client) []workload {
	fail := func(name string, err error) []workload {
		return []workload{{name: name, ops: 1, library: func(context.Context, int, int) error { return err }}}
	}
	seed := make([]*IndexedOrder, s.sz.CountRows)
	for i := range seed {
		seed[i] = newIndexedOrder("count", rowKey(i), i)
	}
	if err := indexed.CreateBatch(ctx, seed); err != nil {
		return fail(s.sz.lookupName(), fmt.Errorf("seeding the indexed table: %w", err))
	}
	seq, err := index.On(indexed, "seq")
	if err != nil {
		return fail(s.sz.lookupName(), err)
	}
	insert := workload{name: "insert, indexed (÷ unindexed)", ops: cfg.Ops, target: targetIndexedWrite,
		library: func(ctx context.Context, _, i int) error {
			return indexed.Create(ctx, newIndexedOrder("insix", "k"+strconv.FormatInt(s.seq.Add(1), 10), i))
		},
		raw: func(ctx context.Context, _, i int) error {
			return s.store.Create(ctx, newOrder("insplain", "k"+strconv.FormatInt(s.seq.Add(1), 10), i))
		}}
	// The control: the indexed insert against hand-written SDK code sending what it sends, a
	// transaction of the entity's insert (with a column listing its index row) and its index
	// row's upsert (an index row some earlier writer left behind must not fail the insert),
	// to the same partition of the same table. The row above compares a transaction with a
	// single-entity request; this one shows what the library adds to the transaction itself.
	// Both sides write where the other writes and send the same kinds of action: Azurite's
	// upserts in a transaction take longer the larger the partition, which would otherwise
	// tilt the ratio.
	inTransaction := workload{name: "insert, indexed (÷ raw transaction of its two rows)", ops: cfg.Ops,
		library: insert.library,
		raw: func(ctx context.Context, _, i int) error {
			rk := "k" + strconv.FormatInt(s.seq.Add(1), 10)
			o := newRawOrder("insix", rk, i)
			body, err := o.marshal(s.now())
			if err != nil {
				return err
			}
			ixKey := fmt.Sprintf("~ix.seq.%016x.%s", o.Sequence, rk)
			body = append(body[:len(body)-1], `,"_Ix":"`+ixKey+`"}`...)
			ixRow := []byte(`{"PartitionKey":"insix","RowKey":"` + ixKey + `","_IxOf":"` + rk + `"}`)
			_, err = rawIndexed.SubmitTransaction(ctx, []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: body},
				{ActionType: aztables.TransactionTypeInsertReplace, Entity: ixRow},
			}, nil)
			return err
		}}
	update := workload{name: "update (Strict), indexed (÷ unindexed)", ops: cfg.Ops, target: targetIndexedWrite}
	ixRows := make([]*IndexedOrder, cfg.Concurrency)
	plainRows := make([]*Order, cfg.Concurrency)
	for w := range cfg.Concurrency {
		ixRows[w] = newIndexedOrder("updix", rowKey(w), w)
		plainRows[w] = newOrder("updplain", rowKey(w), w)
		if err := indexed.Create(ctx, ixRows[w]); err != nil {
			return fail(update.name, err)
		}
		if err := s.store.Create(ctx, plainRows[w]); err != nil {
			return fail(update.name, err)
		}
	}
	update.library = func(ctx context.Context, w, _ int) error {
		v := ixRows[w]
		v.Sequence++ // the indexed value changes: its index row is replaced
		return indexed.Update(ctx, v, abstractions.Strict)
	}
	update.raw = func(ctx context.Context, w, _ int) error {
		v := plainRows[w]
		v.Sequence++
		return s.store.Update(ctx, v, abstractions.Strict)
	}
	n := s.sz.CountRows
	lookup := workload{name: s.sz.lookupName(), ops: cfg.heavyOps(),
		library: func(ctx context.Context, _, i int) error {
			want := int64((i%n+n)%n) * 1_000_003
			found, err := seq.Find(ctx, "count", want)
			if err == nil && (len(found) != 1 || found[0].Sequence != want) {
				err = fmt.Errorf("found %d orders of sequence %d, want 1", len(found), want)
			}
			return err
		},
		// The scan reads the same table: on Azurite, whose queries visit every row of the
		// table whatever their keys, both sides then scan the same rows.
		raw: func(ctx context.Context, _, i int) error {
			want := int64((i%n+n)%n) * 1_000_003
			found, err := indexed.Query(ctx, abstractions.Query[IndexedOrder]{Partition: "count", Where: indexedSequence.Eq(want)})
			if err == nil && len(found) != 1 {
				err = fmt.Errorf("the scan found %d orders of sequence %d, want 1", len(found), want)
			}
			return err
		}}
	return []workload{insert, inTransaction, update, lookup}
}

// lookupName names the lookup workload after its partition's size.
func (z Sizes) lookupName() string {
	return fmt.Sprintf("find by index in %s rows (÷ filtered scan)", thousands(z.CountRows))
}
