package fidelity

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// Fixtures of the query scenarios: the entity types, their renderings, and a service that
// counts requests (to show that refusals send nothing).

// itemLevel is a text-stored enum of the query scenarios.
type itemLevel int

// The levels.
const (
	itemLevelLow itemLevel = iota
	itemLevelMid
	itemLevelHigh
)

var levelNames = []string{"low", "mid", "high"}

// MarshalText stores a level as its name.
func (l itemLevel) MarshalText() ([]byte, error) {
	if l < 0 || int(l) >= len(levelNames) {
		return nil, fmt.Errorf("no level %d", int(l))
	}
	return []byte(levelNames[l]), nil
}

// UnmarshalText reads a level's name.
func (l *itemLevel) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if n == string(b) {
			*l = itemLevel(i)
			return nil
		}
	}
	return fmt.Errorf("no level %q", b)
}

// itemRow is the entity of the query scenarios: one field of every filterable kind, and a few
// that filters refuse.
type itemRow struct {
	abstractions.Entity
	Name   string
	Count  int32
	Big    int64
	Small  uint16
	Mid    uint32
	Huge   uint64
	Score  float64
	Ratio  float32
	Active bool
	When   time.Time
	Span   time.Duration
	Ref    abstractions.GUID
	Level  itemLevel
	Nick   *string
	Opt    *int
	Flag   *bool
	Home   address
	Away   *address
	Tags   []string
	Blob   []byte
	Secret string `table:"-"`
}

// itemRowV1 is an older shape of itemRow, written into the same table to leave columns absent.
type itemRowV1 struct {
	abstractions.Entity
	Name string
}

// snapshotRow is the entity of the versioned-stream scenarios.
type snapshotRow struct {
	abstractions.VersionedEntity
	State string
}

// eventRow is the entity of the append-log scenarios.
type eventRow struct {
	abstractions.Entity
	Text string
}

func ptr[V any](v V) *V { return &v }

// item renders an item without the values the service assigns.
func item(it *itemRow) string {
	if it == nil {
		return "nil"
	}
	deref := func(p any) string {
		switch p := p.(type) {
		case *string:
			if p != nil {
				return *p
			}
		case *int:
			if p != nil {
				return fmt.Sprint(*p)
			}
		case *bool:
			if p != nil {
				return fmt.Sprint(*p)
			}
		case *address:
			if p != nil {
				return fmt.Sprintf("%+v", *p)
			}
		}
		return "nil"
	}
	return fmt.Sprintf("%s name=%q count=%d big=%d small=%d mid=%d huge=%d score=%v ratio=%v active=%v when=%s span=%v ref=%s level=%d nick=%s opt=%s flag=%s home=%+v away=%s tags=%q blob=%x",
		it.ID, it.Name, it.Count, it.Big, it.Small, it.Mid, it.Huge, it.Score, it.Ratio, it.Active, it.When.Format(time.RFC3339Nano), it.Span, it.Ref, it.Level,
		deref(it.Nick), deref(it.Opt), deref(it.Flag), it.Home, deref(it.Away), it.Tags, it.Blob)
}

func ids[T any](vs []*T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = any(v).(interface{ Base() *abstractions.Entity }).Base().ID
	}
	return out
}

// countingTables counts the requests that reach a table service, to show that refusals
// send nothing.
type countingTables struct {
	service.Tables
	n atomic.Int64
}

func (c *countingTables) CreateTable(ctx context.Context, table string) error {
	c.n.Add(1)
	return c.Tables.CreateTable(ctx, table)
}

func (c *countingTables) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.n.Add(1)
	return c.Tables.Query(ctx, table, q)
}

func (c *countingTables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	c.n.Add(1)
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c *countingTables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.n.Add(1)
	return c.Tables.Write(ctx, table, a)
}

func (c *countingTables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	c.n.Add(1)
	return c.Tables.Transact(ctx, table, actions)
}

// countingStoreOf is storeOf over a request counter.
func countingStoreOf[T any, P abstractions.EntityPtr[T]](e *Env) (*tables.Store[T], *countingTables) {
	e.t.Helper()
	ct := &countingTables{Tables: e.Tables}
	acct := e.NewAccount(ct, e.Blobs, &tables.Options{Now: storeClock})
	s, err := tables.For[T, P](acct, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	return s, ct
}
