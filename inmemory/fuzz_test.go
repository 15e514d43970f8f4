package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// FuzzDoc has a field of each kind the codec stores differently.
type FuzzDoc struct {
	abstractions.Entity
	Name string
	N    int64
	F    float64
	When time.Time
	Tags []string
	Meta map[string]string
	Ptr  *string
	Raw  []byte
}

// sentCounter counts the requests that reach the service.
type sentCounter struct {
	service.Tables
	n atomic.Int64
}

func (c *sentCounter) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	c.n.Add(1)
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c *sentCounter) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.n.Add(1)
	return c.Tables.Write(ctx, table, a)
}

func (c *sentCounter) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	c.n.Add(1)
	return c.Tables.Transact(ctx, table, actions)
}

func (c *sentCounter) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.n.Add(1)
	return c.Tables.Query(ctx, table, q)
}

// snapshot renders every row of the table.
func snapshot(t *testing.T, mem *memservice.Service) string {
	t.Helper()
	var b strings.Builder
	q := service.Query{}
	for {
		page, err := mem.Query(context.Background(), "Fuzz", q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			fmt.Fprintf(&b, "%s|%s %s %v\n", r.PartitionKey, r.RowKey, r.ETag, r.Properties)
		}
		if page.Next == nil {
			return b.String()
		}
		q.Continuation = page.Next
	}
}

// refusal reports an error the library returns without sending anything.
func refusal(err error) bool {
	for _, s := range []error{abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrNotSupported,
		abstractions.ErrOversizedCell, abstractions.ErrOversizedValue} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzStorePaths drives the public write and query paths with random ids, values, filter
// values, row-key prefixes and page cursors. No input may panic; a refusal must send
// nothing and leave the table unchanged; and the service must never be the one to refuse
// (whatever it would refuse, the library refuses first), except for the answers that depend
// on what is stored (a duplicate key, a missing row).
func FuzzStorePaths(f *testing.F) {
	f.Add(uint8(0), "eu|alice", "Alice", int64(7), 1.5, int64(1_700_000_000_000_000_000), "vip", "k", "v", "Alice", "al", "", []byte{1, 2})
	f.Add(uint8(4), "eu|b\xff", "x\xfey", int64(-1), math.Copysign(0, -1), int64(0), "\xff", "\xfe", "v", "a\xffb", "A\xff", "", []byte(nil))
	f.Add(uint8(5), "eu|c", "", int64(0), 0.0, int64(-1), "", "", "", "", "", strings.Repeat("eyJi", 5000), []byte{})
	f.Add(uint8(3), "a/b|c#d", "\x00", int64(1<<62), 1e308, int64(-62135596800000000), "<&>", "\u2028", "\u2029", "'", "'", "eyJiIjoieCIsInAiOiJwIiwiciI6InIifQ", []byte{0xff})
	f.Add(uint8(8), "p|"+strings.Repeat("r", 600), strings.Repeat("€", 40000), int64(3), 2.0, int64(1), "t", "m", "n", "z", "p", "!", []byte("raw"))
	f.Fuzz(func(t *testing.T, op uint8, id, name string, n int64, fl float64, nanos int64, tag, metaKey, metaVal, filterVal, prefix, cursor string, raw []byte) {
		ctx := context.Background()
		mem := memservice.New()
		if err := mem.CreateTable(ctx, "Fuzz"); err != nil {
			t.Fatal(err)
		}
		sent := &sentCounter{Tables: mem}
		s, err := tables.For[FuzzDoc](inmemory.NewAccountOver(sent, nil, nil), &tables.StoreOptions{Table: "Fuzz"})
		if err != nil {
			t.Fatal(err)
		}
		// A stored row to update, patch, query and collide with.
		if err := s.Upsert(ctx, &FuzzDoc{Entity: abstractions.Entity{ID: "eu|alice"}, Name: "Alice", N: 1}); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, mem)
		sent.n.Store(0)

		doc := &FuzzDoc{Entity: abstractions.Entity{ID: id}, Name: name, N: n, F: fl, When: time.Unix(0, nanos),
			Tags: []string{tag}, Meta: map[string]string{metaKey: metaVal}, Ptr: &filterVal, Raw: raw}
		pk, _ := abstractions.SplitID(id)
		nameField := abstractions.Field(func(d *FuzzDoc) *string { return &d.Name })
		nField := abstractions.Field(func(d *FuzzDoc) *int64 { return &d.N })
		switch op % 10 {
		case 0:
			err = s.Create(ctx, doc)
		case 1:
			err = s.Upsert(ctx, doc)
		case 2:
			err = s.Update(ctx, doc, abstractions.LastWriterWins)
		case 3:
			_, err = s.Patch(ctx, id, abstractions.Set(abstractions.NewPatch[FuzzDoc](), abstractions.Field(func(d *FuzzDoc) *string { return &d.Name }), name))
		case 4:
			_, err = s.Query(ctx, abstractions.Query[FuzzDoc]{Partition: pk, RowKeyPrefix: prefix, Where: nameField.Eq(filterVal)})
		case 5:
			_, err = s.Page(ctx, abstractions.Query[FuzzDoc]{Partition: pk, Cursor: cursor, Take: int(n % 2000)})
		case 6:
			_, err = s.Query(ctx, abstractions.Query[FuzzDoc]{Partition: pk, Where: abstractions.Or(nField.Gt(n), nameField.Le(filterVal))})
		case 7:
			_, err = s.Delete(ctx, id, "")
		case 8:
			twin := *doc
			twin.ID = id + "x"
			err = s.CreateBatch(ctx, []*FuzzDoc{doc, &twin})
		case 9:
			_, err = s.Count(ctx, pk)
		}
		switch {
		case err == nil:
		case refusal(err):
			if n := sent.n.Load(); n != 0 {
				t.Fatalf("op %d refused with %v after sending %d requests", op%10, err, n)
			}
			if after := snapshot(t, mem); after != before {
				t.Fatalf("op %d refused with %v but the table changed:\n%s\n->\n%s", op%10, err, before, after)
			}
		case errors.Is(err, abstractions.ErrDuplicateKey), errors.Is(err, abstractions.ErrNotFound):
			if after := snapshot(t, mem); after != before {
				t.Fatalf("op %d failed with %v but the table changed", op%10, err)
			}
		default:
			t.Fatalf("op %d: the service refused what the library sent: %v", op%10, err)
		}
	})
}
