package inmemory_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

type Planned struct {
	abstractions.Entity
	Name string
	Age  int
}

// countingTables counts the queries sent to the memory service.
type countingTables struct {
	service.Tables
	queries atomic.Int64
}

func (c *countingTables) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.queries.Add(1)
	return c.Tables.Query(ctx, table, q)
}

func plannedStore(t *testing.T, opts *tables.Options, store *tables.StoreOptions) (*tables.Store[Planned], *countingTables) {
	t.Helper()
	svc := memservice.New()
	ct := &countingTables{Tables: svc}
	s, err := tables.For[Planned](inmemory.NewAccountOver(ct, svc, opts), store)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"eu|1", "eu|2", "us|1"} {
		if err := s.Create(ctx, &Planned{Entity: abstractions.Entity{ID: id}, Name: id}); err != nil {
			t.Fatal(err)
		}
	}
	ct.queries.Store(0)
	return s, ct
}

var (
	plannedName = abstractions.Field(func(p *Planned) *string { return &p.Name })
	plannedAge  = abstractions.Field(func(p *Planned) *int { return &p.Age })
)

func TestTableScanIsLoggedOncePerShape(t *testing.T) {
	var buf bytes.Buffer
	s, ct := plannedStore(t, &tables.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))}, nil)
	ctx := context.Background()
	for _, name := range []string{"eu|1", "us|1", "nobody", "it's"} {
		if _, err := s.Query(ctx, abstractions.Query[Planned]{Where: plannedName.Eq(name)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Any(ctx, abstractions.Query[Planned]{Where: plannedName.Eq(name)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Query(ctx, abstractions.Query[Planned]{Where: plannedAge.Gt(3)}); err != nil {
		t.Fatal(err)
	}
	// Bounded queries and the calls that name the whole table are not logged.
	if _, err := s.Query(ctx, abstractions.Query[Planned]{Partition: "eu", Where: plannedName.Eq("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CountAll(ctx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || ct.queries.Load() == 0 {
		t.Fatalf("%d log lines, want 2 (one per shape):\n%s", len(lines), buf.String())
	}
	for i, want := range []string{`filter="Name eq ?"`, `filter="Age gt ?"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "plan_test.go:") || !strings.Contains(lines[i], "level=WARN") {
			t.Errorf("line %d = %s, want %s and the call site", i, lines[i], want)
		}
		if strings.Contains(lines[i], "nobody") || strings.Contains(lines[i], "us|1") {
			t.Errorf("line %d holds a value: %s", i, lines[i])
		}
	}
}

func TestRefusedTableScanSendsNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		opts  *tables.Options
		store *tables.StoreOptions
	}{
		{"account", &tables.Options{TableScans: tables.RefuseTableScans}, nil},
		{"store", nil, &tables.StoreOptions{TableScans: tables.RefuseTableScans}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ct := plannedStore(t, tc.opts, tc.store)
			calls := map[string]error{}
			_, calls["Query"] = s.Query(ctx, abstractions.Query[Planned]{Where: plannedName.Eq("x")})
			_, calls["Any"] = s.Any(ctx, abstractions.Query[Planned]{})
			_, calls["Page"] = s.Page(ctx, abstractions.Query[Planned]{Where: plannedAge.Ge(1)})
			_, calls["ListAll"] = s.ListAll(ctx)
			_, calls["CountAll"] = s.CountAll(ctx)
			for _, err := range s.Stream(ctx, abstractions.Query[Planned]{}) {
				calls["Stream"] = err
			}
			for name, err := range calls {
				var se *abstractions.StoreError
				if !errors.Is(err, abstractions.ErrInvalidArgument) || !errors.As(err, &se) || !strings.Contains(err.Error(), "Partition") ||
					!strings.Contains(err.Error(), "nothing was sent") {
					t.Errorf("%s: %v, want a refusal that says how to bound it", name, err)
				}
			}
			if strings.Contains(calls["Query"].Error(), `'x'`) || !strings.Contains(calls["Query"].Error(), "Name eq ?") {
				t.Errorf("the refusal names the query's shape without its values: %v", calls["Query"])
			}
			if n := ct.queries.Load(); n != 0 {
				t.Errorf("%d queries sent, want none", n)
			}
			// Bounded queries still run.
			if got, err := s.Query(ctx, abstractions.Query[Planned]{Partition: "eu", Where: plannedName.Eq("eu|1")}); err != nil || len(got) != 1 {
				t.Errorf("bounded query: %v, %v", got, err)
			}
			if n, err := s.Count(ctx, "eu"); err != nil || n != 2 {
				t.Errorf("Count: %d, %v", n, err)
			}
		})
	}
}

func TestAllowTableScans(t *testing.T) {
	var buf bytes.Buffer
	s, _ := plannedStore(t, &tables.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil)), TableScans: tables.RefuseTableScans},
		&tables.StoreOptions{TableScans: tables.AllowTableScans})
	got, err := s.Query(context.Background(), abstractions.Query[Planned]{Where: plannedName.Eq("us|1")})
	if err != nil || len(got) != 1 || buf.Len() != 0 {
		t.Fatalf("%v, %v, log %q", got, err, buf.String())
	}
}

func TestExplain(t *testing.T) {
	s, ct := plannedStore(t, nil, nil)
	for _, tc := range []struct {
		q          abstractions.Query[Planned]
		class, has string
	}{
		{abstractions.Query[Planned]{}, "table_scan", ""},
		{abstractions.Query[Planned]{Where: plannedAge.Gt(1)}, "table_scan", "Age gt 1L"},
		{abstractions.Query[Planned]{Partition: "eu"}, "partition_scan", "PartitionKey eq 'eu'"},
		{abstractions.Query[Planned]{Partition: "eu", Where: plannedAge.Gt(1)}, "partition_scan", "(Age gt 1L)"},
		{abstractions.Query[Planned]{Partition: "eu", RowKeyPrefix: "1"}, "row_range", "RowKey lt '2'"},
	} {
		p, err := s.Explain(tc.q)
		if err != nil || p.Class != tc.class || !strings.Contains(p.Filter, tc.has) {
			t.Errorf("Explain(%+v) = %+v, %v; want %s with %q", tc.q, p, err, tc.class, tc.has)
		}
	}
	if _, err := s.Explain(abstractions.Query[Planned]{RowKeyPrefix: "1"}); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Errorf("a prefix without a partition: %v", err)
	}
	if n := ct.queries.Load(); n != 0 {
		t.Errorf("Explain sent %d queries", n)
	}
}
