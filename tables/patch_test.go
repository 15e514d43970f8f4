package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/service"
)

type patchAddr struct {
	City, Country string
}

type patchee struct {
	abstractions.Entity
	Name   string `table:",alias=FullName"`
	Tags   []string
	Home   patchAddr
	Work   *patchAddr
	When   time.Time
	Pay    int64  `table:",protected=admin"`
	Secret []byte `table:",protected=admin"`
	Big    string `table:",split=gzip"`
}

func patchStore(t *testing.T, opts *Options) *Store[patchee] {
	t.Helper()
	o := Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if opts != nil {
		o.Oversized = opts.Oversized
	}
	s, err := For[patchee](testAccount("test", &pageTables{}, nil, &o), &StoreOptions{Table: "Patchees"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func noRefusal(kind error, cause error, format string, args ...any) error {
	return &abstractions.StoreError{Kind: kind, Err: cause, Message: format}
}

func rowText(r service.Row) string {
	var parts []string
	for _, p := range r.Properties {
		parts = append(parts, p.Name+"="+p.Value.String())
	}
	return strings.Join(parts, " ")
}

func TestPatchRowCells(t *testing.T) {
	s := patchStore(t, nil)
	p := abstractions.NewPatch[patchee]()
	abstractions.Set(p, abstractions.Field(func(x *patchee) *string { return &x.Home.City }), "Lviv")
	abstractions.Set(p, abstractions.Field(func(x *patchee) *[]string { return &x.Tags }), []string{"a"})
	abstractions.Set(p, abstractions.Field(func(x *patchee) *string { return &x.Name }), "N")
	row, _, err := s.patchRow(driver.PatchOf(p), "p", "r", noRefusal)
	if err != nil {
		t.Fatal(err)
	}
	want := `Home_City=Edm.String("Lviv") Tags__Json=Edm.String("[\"a\"]") Name=Edm.String("N") UpdatedAt=Edm.DateTime(2026-01-02T03:04:05.0000000Z)`
	if got := rowText(row); got != want {
		t.Fatalf("cells:\n got %s\nwant %s", got, want)
	}
	// Setting UpdatedAt itself replaces the stamp.
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	p = abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *time.Time { return &x.UpdatedAt }), at)
	row, _, err = s.patchRow(driver.PatchOf(p), "p", "r", noRefusal)
	if err != nil || rowText(row) != "UpdatedAt=Edm.DateTime(2020-01-01T00:00:00.0000000Z)" {
		t.Fatalf("explicit UpdatedAt: %s %v", rowText(row), err)
	}
}

func TestPatchRowRefusals(t *testing.T) {
	s := patchStore(t, nil)
	cases := []struct {
		name string
		p    *abstractions.Patch[patchee]
		kind error
	}{
		{"nested struct", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *patchAddr { return &x.Home }), patchAddr{}), abstractions.ErrNotSupported},
		{"zero time", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *time.Time { return &x.When }), time.Time{}), abstractions.ErrNotSupported},
		{"nil pointer", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) **patchAddr { return &x.Work }), nil), abstractions.ErrNotSupported},
		{"timestamp", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *time.Time { return &x.Timestamp }), time.Now()), abstractions.ErrNotSupported},
		{"large value", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *string { return &x.Big }), "b"), abstractions.ErrNotSupported},
		{"protected", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *int64 { return &x.Pay }), 1), abstractions.ErrProtectedProperty},
		{"oversized", abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *string { return &x.Name }), strings.Repeat("y", 40000)), abstractions.ErrOversizedCell},
	}
	for _, c := range cases {
		_, _, err := s.patchRow(driver.PatchOf(c.p), "p", "r", noRefusal)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.kind)
		}
	}
	p := abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *int64 { return &x.Pay }), 1).AllowProtected()
	if _, _, err := s.patchRow(driver.PatchOf(p), "p", "r", noRefusal); err != nil {
		t.Errorf("AllowProtected: %v", err)
	}
	gz := patchStore(t, &Options{Oversized: OversizedCompress})
	p = abstractions.Set(abstractions.NewPatch[patchee](), abstractions.Field(func(x *patchee) *string { return &x.Name }), strings.Repeat("y", 40000))
	if _, _, err := gz.patchRow(driver.PatchOf(p), "p", "r", noRefusal); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Errorf("compressed: got %v", err)
	}
}

func TestPatch(t *testing.T) {
	const stale = `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`
	name := func(v string) *abstractions.Patch[item] {
		return abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *string { return &x.Name }), v)
	}
	cases := []struct {
		name    string
		id      string
		p       func(current string) *abstractions.Patch[item]
		kind    error
		ifMatch string // the condition sent: "current" for the stored version; "" when nothing is sent
	}{
		{"unconditional", "p|a", func(string) *abstractions.Patch[item] { return name("new") }, nil, "*"},
		{"on the current version", "P|A", func(cur string) *abstractions.Patch[item] { return name("new").WithETag(cur) }, nil, "current"},
		{"on a stale version", "p|a", func(string) *abstractions.Patch[item] { return name("new").WithETag(stale) }, abstractions.ErrConcurrencyConflict, stale},
		{"a missing row", "p|b", func(string) *abstractions.Patch[item] { return name("new") }, abstractions.ErrNotFound, "*"},
		{"nil", "p|a", func(string) *abstractions.Patch[item] { return nil }, abstractions.ErrInvalidArgument, ""},
		{"empty", "p|a", func(string) *abstractions.Patch[item] { return abstractions.NewPatch[item]() }, abstractions.ErrInvalidArgument, ""},
		{"ETag *", "p|a", func(string) *abstractions.Patch[item] { return name("new").WithETag("*") }, abstractions.ErrInvalidArgument, ""},
		{"malformed ETag", "p|a", func(string) *abstractions.Patch[item] { return name("new").WithETag("v2") }, abstractions.ErrInvalidArgument, ""},
		{"nil selector", "p|a", func(string) *abstractions.Patch[item] {
			return abstractions.Set(abstractions.NewPatch[item](), abstractions.Field[item, string](nil), "x")
		}, abstractions.ErrInvalidArgument, ""},
		{"selector through a pointer", "p|a", func(string) *abstractions.Patch[item] {
			return abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *string { var other *item; return &other.Name }), "x")
		}, abstractions.ErrNotSupported, ""},
		{"the id", "p|a", func(string) *abstractions.Patch[item] {
			return abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *string { return &x.ID }), "p|z")
		}, abstractions.ErrNotSupported, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, f := newStore[item](t, nil)
			if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "old", N: 7}); err != nil {
				t.Fatal(err)
			}
			stored, _ := f.row("Items", "p", "a")
			f.resetCalls()
			etag, err := s.Patch(ctx, tc.id, tc.p(stored.ETag))
			wantKind(t, err, tc.kind)
			want := tc.ifMatch
			if want == "current" {
				want = stored.ETag
			}
			switch {
			case want == "" && len(f.calls) != 0:
				t.Errorf("a refused patch sent %v", f)
			case want != "" && (len(f.actions) != 1 || f.actions[0].Op != service.OpMerge || f.actions[0].IfMatch != want):
				t.Errorf("sent %+v, want a merge on condition %q", f.actions, want)
			}
			if tc.kind != nil {
				return
			}
			got, err := s.One(ctx, "p|a")
			if err != nil || got.Name != "new" || got.N != 7 || got.ETag != etag || !got.UpdatedAt.Equal(testNow) {
				t.Errorf("after the patch: %+v, %v (ETag returned %q)", got, err, etag)
			}
		})
	}
}
