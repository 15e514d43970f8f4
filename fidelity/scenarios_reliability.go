package fidelity

import (
	"bytes"
	"context"
	"log/slog"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// ten is ten string columns, flattened into the columns of the field that holds it.
type ten struct{ F0, F1, F2, F3, F4, F5, F6, F7, F8, F9 string }

// wideRow has 260 custom columns (and Id, CreatedAt, UpdatedAt), more than the 252 the
// service allows an entity.
type wideRow struct {
	abstractions.Entity
	A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z ten
}

// bigRow holds up to 20 string cells of 64 KiB each (32,768 UTF-16 units): over the service's
// 1 MiB entity limit when all are full, under its 4 MiB request limit.
type bigRow struct {
	abstractions.Entity
	S00, S01, S02, S03, S04, S05, S06, S07, S08, S09, S10, S11, S12, S13, S14, S15, S16, S17, S18, S19 string
}

// storeOver returns a store of T over svc in the scenario's table.
func storeOver[T any, P abstractions.EntityPtr[T]](e *Env, svc service.Tables, opts *tables.Options) *tables.Store[T] {
	e.t.Helper()
	o := tables.Options{Now: storeClock}
	if opts != nil {
		o = *opts
		o.Now = storeClock
	}
	s, err := tables.For[T, P](e.NewAccount(svc, e.Blobs, &o), &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	return s
}

func reliabilityScenarios() []Scenario {
	return []Scenario{
		{
			Name:    "store/reads-never-create-tables",
			NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[customerRow](e, nil)
				_, err := s.One(ctx, "eu|alice")
				e.Is("one", err, abstractions.ErrNotFound)
				ok, err := s.Exists(ctx, "eu|alice")
				e.OK("exists", err)
				e.Equal("exists", ok, false)
				n, err := s.Count(ctx, "eu")
				e.OK("count", err)
				e.Equal("count", n, 0)
				vs, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "eu"})
				e.OK("query", err)
				e.Equal("query", len(vs), 0)
				page, err := s.Page(ctx, abstractions.Query[customerRow]{Partition: "eu"})
				e.OK("page", err)
				e.Equal("page", len(page.Items) == 0 && page.Cursor == "", true)
				there, err := e.Tables.TableExists(ctx, e.Table)
				e.OK("table exists after the reads", err)
				e.Equal("table exists after the reads", there, false)
				e.OK("create", s.Create(ctx, alice()))
				there, err = e.Tables.TableExists(ctx, e.Table)
				e.OK("table exists after the write", err)
				e.Equal("table exists after the write", there, true)
				e.OK("drop", e.Tables.DeleteTable(ctx, e.Table))
			},
		},
		{
			Name:    "store/never-create-tables",
			NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[customerRow](e, &tables.Options{NeverCreateTables: true})
				e.Is("create in a missing table", s.Create(ctx, alice()), abstractions.ErrNotFound)
				_, err := s.UpsertBatch(ctx, []*customerRow{alice()})
				e.Is("batch in a missing table", err, abstractions.ErrNotFound)
				e.Is("ensure created checks only", s.EnsureCreated(ctx), abstractions.ErrNotFound)
				there, err := e.Tables.TableExists(ctx, e.Table)
				e.OK("table exists", err)
				e.Equal("table exists", there, false)
				e.OK("an administrator creates the table", e.Tables.CreateTable(ctx, e.Table))
				e.OK("ensure created", s.EnsureCreated(ctx))
				e.OK("create", s.Create(ctx, alice()))
				e.OK("drop", e.Tables.DeleteTable(ctx, e.Table))
			},
		},
		{
			Name: "store/lost-table-is-visible-to-the-next-write",
			Run: func(ctx context.Context, e *Env) {
				var logs bytes.Buffer
				s := storeOf[customerRow](e, &tables.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				e.OK("create", s.Create(ctx, alice()))
				e.OK("the table is lost", e.Tables.DeleteTable(ctx, e.Table))
				_, err := s.One(ctx, "eu|alice-smith")
				e.Is("a read finds nothing", err, abstractions.ErrNotFound)
				e.Equal("the read warned", strings.Contains(logs.String(), "level=WARN"), false)
				c := alice()
				c.ID = "eu|bob"
				e.OK("the next write", s.Create(ctx, c))
				e.Equal("the write warned that the table was lost", strings.Contains(logs.String(), "table this account had written to is gone"), true)
				n, err := s.Count(ctx, "eu")
				e.OK("count", err)
				e.Equal("only the new row", n, 1)
			},
		},
		{
			Name: "store/bad-text-and-cursors-send-nothing",
			Run: func(ctx context.Context, e *Env) {
				svc := &countingTables{Tables: e.Tables}
				s := storeOver[customerRow](e, svc, nil)
				name := abstractions.Field(func(c *customerRow) *string { return &c.Name })
				_, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "eu", Where: name.Eq("a\xffb")})
				e.Is("a filter value with invalid UTF-8", err, abstractions.ErrInvalidArgument)
				_, err = s.Page(ctx, abstractions.Query[customerRow]{Partition: "eu", Cursor: strings.Repeat("eyJiIjoi", 20_000)})
				e.Is("a 160 KB cursor", err, abstractions.ErrInvalidArgument)
				c := alice()
				c.Tags = []string{"ok", "bad\xff"}
				e.Is("invalid UTF-8 in a JSON-stored field", s.Create(ctx, c), abstractions.ErrInvalidArgument)
				e.Is("an id with invalid UTF-8", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "eu|\xff"}}), abstractions.ErrInvalidKey)
				e.Equal("requests sent", svc.n.Load(), int64(0))
			},
		},
		{
			Name: "store/changed-column-type-is-integrity",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[customerRow](e, nil)
				_, err := e.Tables.Write(ctx, e.Table, insert(row("eu", "x", "Balance", service.String("a lot"))))
				e.OK("another client writes Balance as text", err)
				_, err = s.One(ctx, "eu|x")
				e.Is("read", err, abstractions.ErrIntegrity)
			},
		},
		{
			Name:      "store/deviation-too-many-properties",
			Deviation: "too-many-properties",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[wideRow](e, nil)
				err := s.Create(ctx, &wideRow{Entity: abstractions.Entity{ID: "p|wide"}})
				if e.OnAzurite() {
					e.OK("create 260 columns", err)
					return
				}
				e.Status("create 260 columns", err, 400, "TooManyProperties")
			},
		},
		{
			Name:      "store/deviation-entity-over-1mib",
			Deviation: "insert-entity-size",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[bigRow](e, nil)
				full := strings.Repeat("x", 32_768)
				v := &bigRow{Entity: abstractions.Entity{ID: "p|big"}, S00: full, S01: full, S02: full, S03: full, S04: full, S05: full, S06: full,
					S07: full, S08: full, S09: full, S10: full, S11: full, S12: full, S13: full, S14: full, S15: full, S16: full, S17: full}
				err := s.Create(ctx, v)
				if e.OnAzurite() {
					e.OK("create 1.1 MiB", err)
					return
				}
				e.Status("create 1.1 MiB", err, 400, "EntityTooLarge")
			},
		},
	}
}
