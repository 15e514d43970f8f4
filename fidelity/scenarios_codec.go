package fidelity

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// The codec scenarios store structs through the codec and the service layer: the cells a
// struct becomes must survive both services unchanged (the observation logs compare them
// cell for cell) and decode back to a value equal to the original.

// codecLevel is an enum stored as its text.
type codecLevel int

const (
	levelLow codecLevel = iota
	levelHigh
)

var codecLevelNames = []string{"low", "high"}

// MarshalText returns the level's name; a level without one is refused.
func (l codecLevel) MarshalText() ([]byte, error) {
	if l < 0 || int(l) >= len(codecLevelNames) {
		return nil, fmt.Errorf("level %d has no name", int(l))
	}
	return []byte(codecLevelNames[l]), nil
}

// UnmarshalText sets the level named by b; an unknown name is refused.
func (l *codecLevel) UnmarshalText(b []byte) error {
	for i, n := range codecLevelNames {
		if n == string(b) {
			*l = codecLevel(i)
			return nil
		}
	}
	return fmt.Errorf("unknown level %q", b)
}

type codecGeo struct{ Lat, Lon float64 }

// codecAddress is a nested struct (Home_*, Work_* columns), itself holding one.
type codecAddress struct {
	Street string
	Geo    codecGeo
	Floor  *int16
}

// codecAudit is embedded: its fields are promoted to top-level columns.
type codecAudit struct {
	By string
	At time.Time
}

// codecSample exercises every mapping of the codec.
type codecSample struct {
	abstractions.Entity
	codecAudit

	Name string `table:",alias=FullName"`
	B    bool
	I8   int8
	I16  int16
	I32  int32
	I    int
	I64  int64
	U8   uint8
	U16  uint16
	U32  uint32
	U    uint
	U64  uint64
	F32  float32
	F64  float64
	// Whole is a whole-valued double: it must come back a double, not an Int32.
	Whole    float64
	When     time.Time
	Never    time.Time // the zero time: no column
	D        time.Duration
	Bytes    []byte
	NoBytes  []byte // nil: no column
	NilBytes []byte // empty: an empty cell
	G        abstractions.GUID
	Level    codecLevel
	PStr     *string
	PNil     *string
	PInt     *int64
	PTime    *time.Time
	PLevel   *codecLevel
	Home     codecAddress
	Work     *codecAddress
	Away     *codecAddress // nil: no columns
	Tags     []string
	Scores   map[string]int
	NilTags  []string // nil: no column
	Big      []string // too large for one cell: __GZip
}

// codecRenamed reads rows written before its fields were renamed.
type codecRenamed struct {
	abstractions.Entity
	codecAudit
	_      struct{} `table:",alias=By:Author"`
	Name   string   `table:",alias=FullName|Nom"`
	Labels []string `table:",alias=Tags"`
}

func codecPtr[T any](v T) *T { return &v }

func codecSampleValue() *codecSample {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890123400, time.UTC)
	g, err := abstractions.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	if err != nil {
		panic(err)
	}
	big := make([]string, 6000)
	for i := range big {
		big[i] = fmt.Sprintf("item-%05d", i)
	}
	return &codecSample{
		Entity:     abstractions.Entity{ID: "p|r", CreatedAt: at.Add(-time.Hour), UpdatedAt: at},
		codecAudit: codecAudit{By: "ops", At: at.Add(time.Minute)},
		Name:       "héllo 'quoted' \"double\" \u2028 😀",
		B:          true,
		I8:         math.MinInt8,
		I16:        math.MaxInt16,
		I32:        math.MinInt32,
		I:          math.MaxInt64,
		I64:        math.MinInt64,
		U8:         math.MaxUint8,
		U16:        math.MaxUint16,
		U32:        math.MaxUint32,
		U:          1 << 63,
		U64:        math.MaxUint64,
		F32:        -1.25e-3,
		F64:        math.MaxFloat64,
		Whole:      5,
		When:       at,
		D:          26*time.Hour + 3*time.Nanosecond,
		Bytes:      []byte{0, 1, 2, 250, 255},
		NilBytes:   []byte{},
		G:          g,
		Level:      levelHigh,
		PStr:       codecPtr("pointed"),
		PInt:       codecPtr(int64(-42)),
		PTime:      codecPtr(time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)),
		PLevel:     codecPtr(levelLow),
		Home:       codecAddress{Street: "1 Main St", Geo: codecGeo{Lat: 53.35, Lon: -6.26}, Floor: codecPtr(int16(3))},
		Work:       &codecAddress{Street: "2 Side St"},
		Tags:       []string{"vip", "", "beta"},
		Scores:     map[string]int{"a": 1, "b": -2},
		Big:        big,
	}
}

// codecDiff compares a value read back through a store with want, whose ETag and Timestamp
// are taken from what was read (the service assigns them). It records the diff and fails on
// any.
func codecDiff[T any](e *Env, step string, back, want *T, base, read *abstractions.Entity) {
	e.t.Helper()
	base.ETag, base.Timestamp = read.ETag, read.Timestamp
	d := cmp.Diff(want, back, cmp.AllowUnexported(codecSample{}, codecRenamed{}))
	e.Equal(step+": diff from the original (-want +got)", d, "")
}

// columns lists a row's cells as name:type, sorted, or names only.
func columns(r *service.Row, typed bool) string {
	var cols []string
	for _, p := range r.Properties {
		c := p.Name
		if typed {
			c += ":" + p.Value.Kind().String()
		}
		cols = append(cols, c)
	}
	sort.Strings(cols)
	return strings.Join(cols, " ")
}

// blobRow is an entity with a bytes field of no large-value tag: one cell.
type blobRow struct {
	abstractions.Entity
	Data []byte
}

var codecScenarios = []Scenario{
	{
		// Bytes above one cell are refused before anything is sent, as a string above one
		// cell is, by every write that would store them: the service would answer 400
		// PropertyValueTooLarge, which matches no sentinel.
		Name: "codec/bytes-above-a-cell-are-refused-before-sending",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[blobRow](e, nil)
			e.OK("65536 bytes", s.Create(ctx, &blobRow{Entity: abstractions.Entity{ID: "p|fits"}, Data: make([]byte, 65536)}))
			over := make([]byte, 65537)
			e.Is("create 65537 bytes", s.Create(ctx, &blobRow{Entity: abstractions.Entity{ID: "p|over"}, Data: over}), abstractions.ErrOversizedCell)
			e.Is("upsert 65537 bytes", s.Upsert(ctx, &blobRow{Entity: abstractions.Entity{ID: "p|fits"}, Data: over}), abstractions.ErrOversizedCell)
			e.Is("update 65537 bytes", s.Update(ctx, &blobRow{Entity: abstractions.Entity{ID: "p|fits"}, Data: over}, abstractions.LastWriterWins), abstractions.ErrOversizedCell)
			data := abstractions.Field(func(r *blobRow) *[]byte { return &r.Data })
			_, err := s.Patch(ctx, "p|fits", abstractions.Set(abstractions.NewPatch[blobRow](), data, over))
			e.Is("patch 65537 bytes", err, abstractions.ErrOversizedCell)
			e.Is("batch 65537 bytes", s.CreateBatch(ctx, []*blobRow{{Entity: abstractions.Entity{ID: "p|b1"}}, {Entity: abstractions.Entity{ID: "p|b2"}, Data: over}}), abstractions.ErrOversizedCell)
			events := polyOf[polyEvent](e, polyTypes(e))
			_, err = events.MergeColumns(ctx, polyKey("p", "fits"), map[string]any{"_Blob": over}, "")
			e.Is("a polymorphic system column of 65537 bytes", err, abstractions.ErrOversizedCell)
			_, err = events.MergeColumns(ctx, polyKey("p", "fits"), map[string]any{"_Text": strings.Repeat("a", 32769)}, "")
			e.Is("a polymorphic system column of 32769 units", err, abstractions.ErrOversizedCell)
			rows := e.observeRows(ctx, "nothing over a cell was sent")
			e.Equal("one row, as created", len(rows), 1)
		},
	},
	{
		Name: "codec/every-mapping-round-trips",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[codecSample](e, nil)
			want := codecSampleValue()
			e.OK("create", s.Create(ctx, want))
			got, err := e.Tables.GetRow(ctx, e.Table, "p", "r", nil)
			e.OK("get", err)
			e.Observe("columns", columns(&got, true))
			for _, name := range []string{"Big__GZip", "Tags__Json", "Scores__Json", "Home_Geo_Lat", "Work_Street", "By", "Id"} {
				_, ok := got.Get(name)
				e.Equal("stored has "+name, ok, true)
			}
			for _, name := range []string{"Never", "NoBytes", "PNil", "Away_Street", "NilTags__Json", "Big__Json", "ETag", "Timestamp"} {
				_, ok := got.Get(name)
				e.Equal("stored lacks "+name, ok, false)
			}
			e.Observe("cells read back", got)
			back, err := s.One(ctx, "p|r")
			e.OK("read", err)
			if back != nil {
				codecDiff(e, "read", back, want, &want.Entity, &back.Entity)
			}
		},
	},
	{
		Name: "codec/old-layout-reads-through-aliases",
		Run: func(ctx context.Context, e *Env) {
			created := time.Date(2019, 5, 6, 7, 8, 9, 0, time.UTC)
			modified := created.Add(48 * time.Hour)
			newer := modified.Add(time.Hour)
			// Written before the renames: only the old columns.
			old := row("p", "old",
				"Id", service.String("p|old"),
				"FullName", service.String("Ada"),
				"Author", service.String("ops"),
				"Tags__Json", service.String(`["a","b"]`),
				"Created", service.DateTime(created),
				"Modified", service.DateTime(modified),
			)
			// Half-migrated: the canonical columns win over the old ones.
			both := row("p", "both",
				"Id", service.String("p|both"),
				"Name", service.String("Grace"),
				"FullName", service.String("stale"),
				"Nom", service.String("staler"),
				"By", service.String("dev"),
				"Author", service.String("stale"),
				"Labels__Json", service.String(`["new"]`),
				"Tags__Json", service.String(`["stale"]`),
				"CreatedAt", service.DateTime(created),
				"Created", service.DateTime(newer),
				"UpdatedAt", service.DateTime(newer),
				"Modified", service.DateTime(modified),
			)
			for _, r := range []service.Row{old, both} {
				_, err := e.Tables.Write(ctx, e.Table, insert(r))
				e.OK("insert "+r.RowKey, err)
			}
			wants := map[string]*codecRenamed{
				"old": {Entity: abstractions.Entity{ID: "p|old", CreatedAt: created, UpdatedAt: modified},
					codecAudit: codecAudit{By: "ops"}, Name: "Ada", Labels: []string{"a", "b"}},
				"both": {Entity: abstractions.Entity{ID: "p|both", CreatedAt: created, UpdatedAt: newer},
					codecAudit: codecAudit{By: "dev"}, Name: "Grace", Labels: []string{"new"}},
			}
			s := storeOf[codecRenamed](e, nil)
			for _, rk := range []string{"old", "both"} {
				back, err := s.One(ctx, "p|"+rk)
				e.OK("read "+rk, err)
				if back == nil {
					continue
				}
				want := wants[rk]
				codecDiff(e, rk, back, want, &want.Entity, &back.Entity)
				// A rewrite converges on the canonical names.
				e.OK("rewrite "+rk, s.Upsert(ctx, back))
				got, err := e.Tables.GetRow(ctx, e.Table, "p", rk, nil)
				e.OK("get "+rk, err)
				e.Observe("rewritten columns of "+rk, columns(&got, false))
			}
		},
	},
}
