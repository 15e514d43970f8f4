package fidelity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/engine"
	"github.com/unified-data/gotables/tables/service"
)

// Level is a text-stored enum of the query scenarios.
type Level int

// The levels.
const (
	Low Level = iota
	Mid
	High
)

var levelNames = []string{"low", "mid", "high"}

// MarshalText stores a level as its name.
func (l Level) MarshalText() ([]byte, error) {
	if l < 0 || int(l) >= len(levelNames) {
		return nil, fmt.Errorf("no level %d", int(l))
	}
	return []byte(levelNames[l]), nil
}

// UnmarshalText reads a level's name.
func (l *Level) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if n == string(b) {
			*l = Level(i)
			return nil
		}
	}
	return fmt.Errorf("no level %q", b)
}

// Item is the entity of the query scenarios: one field of every filterable kind, and a few
// that filters refuse.
type Item struct {
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
	Level  Level
	Nick   *string
	Opt    *int
	Flag   *bool
	Home   Address
	Away   *Address
	Tags   []string
	Blob   []byte
	Secret string `table:"-"`
}

// ItemV1 is an older shape of Item, written into the same table to leave columns absent.
type ItemV1 struct {
	abstractions.Entity
	Name string
}

// Snapshot is the entity of the versioned-stream scenarios.
type Snapshot struct {
	abstractions.VersionedEntity
	State string
}

// Event is the entity of the append-log scenarios.
type Event struct {
	abstractions.Entity
	Text string
}

func ptr[V any](v V) *V { return &v }

// item renders an item without the values the service assigns.
func item(it *Item) string {
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
		case *Address:
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
		out[i] = any(v).(abstractions.EntityBase).Base().ID
	}
	return out
}

// countingTables counts the requests a store sends, to show that refusals send nothing.
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
func countingStoreOf[T any, P abstractions.EntityPtr[T]](e *Env) (*engine.Store[T], *countingTables) {
	e.t.Helper()
	ct := &countingTables{Tables: e.Tables}
	acct := engine.NewAccount(e.Backend, ct, e.Blobs, &engine.Options{Now: storeClock})
	s, err := engine.New[T, P](acct, &engine.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	return s, ct
}

// The fields filters are built from, resolved once.
var (
	fName   = abstractions.Field(func(i *Item) *string { return &i.Name })
	fCount  = abstractions.Field(func(i *Item) *int32 { return &i.Count })
	fBig    = abstractions.Field(func(i *Item) *int64 { return &i.Big })
	fSmall  = abstractions.Field(func(i *Item) *uint16 { return &i.Small })
	fMid    = abstractions.Field(func(i *Item) *uint32 { return &i.Mid })
	fHuge   = abstractions.Field(func(i *Item) *uint64 { return &i.Huge })
	fScore  = abstractions.Field(func(i *Item) *float64 { return &i.Score })
	fRatio  = abstractions.Field(func(i *Item) *float32 { return &i.Ratio })
	fActive = abstractions.Field(func(i *Item) *bool { return &i.Active })
	fWhen   = abstractions.Field(func(i *Item) *time.Time { return &i.When })
	fSpan   = abstractions.Field(func(i *Item) *time.Duration { return &i.Span })
	fRef    = abstractions.Field(func(i *Item) *abstractions.GUID { return &i.Ref })
	fLevel  = abstractions.Field(func(i *Item) *Level { return &i.Level })
	fNick   = abstractions.NullableField(func(i *Item) **string { return &i.Nick })
	fOpt    = abstractions.NullableField(func(i *Item) **int { return &i.Opt })
	fFlag   = abstractions.NullableField(func(i *Item) **bool { return &i.Flag })
	fCity   = abstractions.Field(func(i *Item) *string { return &i.Home.City })
	fHome   = abstractions.Field(func(i *Item) *Address { return &i.Home })
	fTags   = abstractions.Field(func(i *Item) *[]string { return &i.Tags })
	fID     = abstractions.Field(func(i *Item) *string { return &i.ID })
	fActIs  = abstractions.IsTrue(func(i *Item) *bool { return &i.Active })
	baseT   = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	guidOf  = func(b byte) abstractions.GUID {
		return abstractions.GUID{b, 0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, b}
	}
	huge    = uint64(math.MaxUint64 - 5)
	nickAny = "al"
)

// items is the fixed data set of the filter scenarios.
func items() []*Item {
	out := make([]*Item, 0, 8)
	for i := 0; i < 8; i++ {
		it := &Item{
			Entity: abstractions.Entity{ID: fmt.Sprintf("p|i%d", i)},
			Name:   []string{"alice", "Bob", "carol", "dave", "it's", "émile", "😀", ""}[i],
			Count:  int32(i*10 - 30),
			Big:    int64(i-4) * 1_000_000_000_000,
			Small:  uint16(i * 1000),
			Mid:    uint32(i) * 600_000_000,
			Huge:   []uint64{0, 1, huge, math.MaxInt64, 7, 7, 1 << 63, 42}[i],
			Score:  float64(i)*1.25 - 3,
			Ratio:  float32(i) / 4,
			Active: i%2 == 0,
			When:   baseT.Add(time.Duration(i) * time.Hour),
			Span:   time.Duration(i) * 90 * time.Second,
			Ref:    guidOf(byte(i * 17)),
			Level:  Level(i % 3),
			Home:   Address{City: []string{"Lviv", "Kyiv", "Oslo", "Lviv", "Rome", "Oslo", "Lima", "Kyiv"}[i], Country: "X"},
			Tags:   []string{fmt.Sprint(i)},
		}
		if i%3 != 0 {
			it.Nick = ptr([]string{"al", "bo"}[i%2])
			it.Opt = ptr(i * 3)
			it.Flag = ptr(i%2 == 1)
			it.Away = &Address{City: "Far"}
		}
		if i == 7 {
			it.When = time.Time{} // no column
		}
		out = append(out, it)
	}
	return out
}

type namedFilter struct {
	name string
	f    abstractions.Filter[Item]
}

// supportedFilters is every supported comparison on every supported type.
func supportedFilters() []namedFilter {
	var fs []namedFilter
	add := func(name string, f abstractions.Filter[Item]) { fs = append(fs, namedFilter{name, f}) }
	add("name eq", fName.Eq("carol"))
	add("name eq quote", fName.Eq("it's"))
	add("name eq empty", fName.Eq(""))
	add("name lt", fName.Lt("carol"))
	add("name ge", fName.Ge("c"))
	add("name gt non-BMP", fName.Gt("émile"))
	add("name le", fName.Le("Bob"))
	for _, c := range []struct {
		n string
		f func(int32) abstractions.Filter[Item]
	}{{"eq", fCount.Eq}, {"ne", fCount.Ne}, {"lt", fCount.Lt}, {"le", fCount.Le}, {"gt", fCount.Gt}, {"ge", fCount.Ge}} {
		add("int32 "+c.n, c.f(10))
		add("int32 negative "+c.n, c.f(-20))
	}
	for _, c := range []struct {
		n string
		f func(int64) abstractions.Filter[Item]
	}{{"eq", fBig.Eq}, {"ne", fBig.Ne}, {"lt", fBig.Lt}, {"le", fBig.Le}, {"gt", fBig.Gt}, {"ge", fBig.Ge}} {
		add("int64 "+c.n, c.f(1_000_000_000_000))
		add("int64 zero "+c.n, c.f(0))
	}
	add("uint16 lt", fSmall.Lt(3000))
	add("uint16 eq", fSmall.Eq(2000))
	add("uint32 gt", fMid.Gt(2_400_000_000))
	add("uint32 ne", fMid.Ne(0))
	add("uint64 eq above MaxInt64", fHuge.Eq(huge))
	add("uint64 eq top bit", fHuge.Eq(1<<63))
	add("uint64 ne", fHuge.Ne(7))
	for _, c := range []struct {
		n string
		f func(float64) abstractions.Filter[Item]
	}{{"eq", fScore.Eq}, {"ne", fScore.Ne}, {"lt", fScore.Lt}, {"le", fScore.Le}, {"gt", fScore.Gt}, {"ge", fScore.Ge}} {
		add("double "+c.n, c.f(-0.5))
		add("double whole "+c.n, c.f(2))
	}
	add("float32 ge", fRatio.Ge(0.75))
	add("float32 eq", fRatio.Eq(0.25))
	add("bool eq true", fActive.Eq(true))
	add("bool ne true", fActive.Ne(true))
	add("bool bare", fActIs)
	add("not bool bare", abstractions.Not(fActIs))
	add("time eq", fWhen.Eq(baseT.Add(2*time.Hour)))
	add("time lt", fWhen.Lt(baseT.Add(3*time.Hour)))
	add("time ge", fWhen.Ge(baseT.Add(5*time.Hour)))
	add("time in another zone", fWhen.Eq(baseT.Add(time.Hour).In(time.FixedZone("x", 3600))))
	add("duration ge", fSpan.Ge(4*time.Minute))
	add("duration eq", fSpan.Eq(3*time.Minute))
	add("guid eq", fRef.Eq(guidOf(34)))
	add("guid ne", fRef.Ne(guidOf(34)))
	add("enum eq", fLevel.Eq(Mid))
	add("enum ne", fLevel.Ne(High))
	add("pointer string eq", fNick.Eq(nickAny))
	add("pointer int lt", fOpt.Lt(10))
	add("pointer int ge", fOpt.Ge(10))
	add("pointer bool eq", fFlag.Eq(false))
	add("nested eq", fCity.Eq("Lviv"))
	add("nested gt", fCity.Gt("Lima"))
	add("id eq", fID.Eq("p|i3"))
	return fs
}

// refusedFilters is every filter shape the translator refuses.
func refusedFilters() []namedFilter {
	far := abstractions.Field(func(i *Item) *string { return &i.Away.City })
	secret := abstractions.Field(func(i *Item) *string { return &i.Secret })
	etag := abstractions.Field(func(i *Item) *string { return &i.ETag })
	blob := abstractions.Field(func(i *Item) *[]byte { return &i.Blob })
	outside := abstractions.Field(func(i *Item) *string { s := ""; return &s })
	many := make([]abstractions.Filter[Item], 14)
	for i := range many {
		many[i] = fCount.Eq(int32(i))
	}
	return []namedFilter{
		{"json field", fTags.Eq([]string{"1"})},
		{"enum ordering", fLevel.Lt(High)},
		{"uint64 ordering", fHuge.Gt(5)},
		{"guid ordering", fRef.Lt(guidOf(1))},
		{"string ne", fName.Ne("alice")},
		{"negated string", abstractions.Not(fName.Eq("alice"))},
		{"negated string deep", abstractions.Not(abstractions.And(fCount.Eq(1), abstractions.Or(fCount.Eq(2), fCity.Lt("x"))))},
		{"pointer ne", fOpt.Ne(3)},
		{"negated pointer", abstractions.Not(fOpt.Ge(3))},
		{"negated pointer bool", abstractions.Not(fFlag.Eq(true))},
		{"time ne", fWhen.Ne(baseT)},
		{"zero time", fWhen.Lt(time.Time{})},
		{"time before 1601", fWhen.Gt(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"nested by pointer", far.Eq("Far")},
		{"no stored column", secret.Eq("x")},
		{"etag", etag.Eq("x")},
		{"binary", blob.Eq([]byte{1})},
		{"nested struct", fHome.Eq(Address{City: "Lviv"})},
		{"selector outside", outside.Eq("x")},
		{"NaN", fScore.Eq(math.NaN())},
		{"infinity", fScore.Lt(math.Inf(1))},
		{"16 comparisons with the partition", abstractions.Or(append(many, fCount.Eq(99))...)},
		{"empty and", abstractions.And[Item]()},
		{"empty or", abstractions.Or[Item]()},
		{"zero filter operand", abstractions.And(fCount.Eq(1), abstractions.Filter[Item]{})},
	}
}

var queryStoreScenarios = []Scenario{
	{
		Name: "store/query-prefix-ranges",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Customer](e, nil)
			keys := []string{"a", "ab", "abc", "ab~", "ac", "b", "a\uffff", "a\uffffz", "a\ufffe", "b\uffff", "\uffff", "\uffff\uffff",
				"c😀", "c😀x", "c😁", "c\U0010ffff", "c\U0010ffffq", "c\ue000", "d\ud7ff", "d\ud7ffz", "d\U00010000", "e\"x", "e\"", "e$",
				"it's", "it's-me", "its", "msg_1", "msg_2", "msg`"}
			var batch []*Customer
			for _, k := range keys {
				batch = append(batch, &Customer{Entity: abstractions.Entity{ID: "p|" + k}, Name: k})
				batch = append(batch, &Customer{Entity: abstractions.Entity{ID: "q|" + k}, Name: k})
			}
			e.OK("seed", s.CreateBatch(ctx, batch))
			for _, prefix := range []string{"a", "ab", "a\uffff", "\uffff", "b\uffff", "c😀", "c\U0010ffff", "d\ud7ff", "e\"", "it's", "msg_", "A", "zzz"} {
				got, err := s.Query(ctx, abstractions.Query[Customer]{Partition: "P", RowKeyPrefix: prefix})
				e.OK(fmt.Sprintf("prefix %+q", prefix), err)
				e.Observe(fmt.Sprintf("prefix %+q", prefix), ids(got))
				for _, c := range got {
					if _, rk := abstractions.SplitID(c.ID); !strings.HasPrefix(rk, strings.ToLower(prefix)) || !strings.HasPrefix(c.ID, "p|") {
						e.Errorf("prefix %+q returned %q", prefix, c.ID)
					}
				}
			}
			n := 0
			for _, k := range keys {
				if strings.HasPrefix(k, "a") {
					n++
				}
			}
			got, err := s.Query(ctx, abstractions.Query[Customer]{Partition: "p", RowKeyPrefix: "a"})
			e.OK("prefix a", err)
			e.Equal("prefix a selects every key starting with a", len(got), n)
			got, err = s.Query(ctx, abstractions.Query[Customer]{Partition: "p", RowKeyPrefix: "a", Take: 3})
			e.OK("prefix with take", err)
			e.Observe("prefix with take", ids(got))
			c, ct := countingStoreOf[Customer](e)
			_, err = c.Query(ctx, abstractions.Query[Customer]{RowKeyPrefix: "a"})
			e.Is("prefix without partition", err, abstractions.ErrNotSupported)
			_, err = c.Query(ctx, abstractions.Query[Customer]{Partition: "p", RowKeyPrefix: "a/b"})
			e.Is("prefix with a forbidden character", err, abstractions.ErrInvalidKey)
			_, err = c.Query(ctx, abstractions.Query[Customer]{Partition: "p/q"})
			e.Is("bad partition", err, abstractions.ErrInvalidKey)
			_, err = c.Query(ctx, abstractions.Query[Customer]{Partition: "p", Take: -1})
			e.Is("negative take", err, abstractions.ErrInvalidArgument)
			_, err = c.Query(ctx, abstractions.Query[Customer]{Partition: "p", Cursor: "x"})
			e.Is("a cursor outside Page", err, abstractions.ErrInvalidArgument)
			e.Equal("refusals sent nothing", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/query-2500-rows",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Customer](e, nil)
			var batch []*Customer
			for i := 0; i < 2500; i++ {
				batch = append(batch, &Customer{Entity: abstractions.Entity{ID: fmt.Sprintf("big|%05d", i)}, Name: fmt.Sprint(i), Balance: float64(i)})
			}
			batch = append(batch, &Customer{Entity: abstractions.Entity{ID: "other|1"}}, &Customer{Entity: abstractions.Entity{ID: "a|1"}})
			e.OK("seed", s.CreateBatch(ctx, batch))
			want := func(from, to int) []string {
				var out []string
				for i := from; i < to; i++ {
					out = append(out, fmt.Sprintf("big|%05d", i))
				}
				return out
			}
			same := func(step string, got []string, want []string) {
				e.Equal(step+": rows", len(got), len(want))
				e.Equal(step+": exactly the rows, in order", strings.Join(got, ",") == strings.Join(want, ","), true)
			}

			got, err := s.Query(ctx, abstractions.Query[Customer]{Partition: "big", Take: 1500})
			e.OK("take 1500", err)
			same("take 1500 across a page boundary", ids(got), want(0, 1500))
			got, err = s.Query(ctx, abstractions.Query[Customer]{Partition: "big", Take: 1000})
			e.OK("take 1000", err)
			same("take 1000", ids(got), want(0, 1000))
			got, err = s.Query(ctx, abstractions.Query[Customer]{Partition: "big"})
			e.OK("all", err)
			same("all 2500", ids(got), want(0, 2500))

			var streamed []string
			for c, err := range s.Stream(ctx, abstractions.Query[Customer]{Partition: "big"}) {
				e.OK("stream", err)
				streamed = append(streamed, c.ID)
			}
			same("stream 2500", streamed, want(0, 2500))
			streamed = streamed[:0]
			for c, err := range s.Stream(ctx, abstractions.Query[Customer]{Partition: "big", Take: 1001}) {
				e.OK("stream take", err)
				streamed = append(streamed, c.ID)
			}
			same("stream take 1001", streamed, want(0, 1001))
			streamed = streamed[:0]
			for c, err := range s.Stream(ctx, abstractions.Query[Customer]{Partition: "big"}) {
				e.OK("stream break", err)
				streamed = append(streamed, c.ID)
				if len(streamed) == 1200 {
					break
				}
			}
			same("stream stopped by the consumer", streamed, want(0, 1200))

			var paged []string
			pages, cursor := 0, ""
			var firstCursor string
			for {
				page, err := s.Page(ctx, abstractions.Query[Customer]{Partition: "big", Take: 50, Cursor: cursor})
				e.OK("page", err)
				pages++
				if len(page.Items) > 50 {
					e.Errorf("page %d holds %d rows", pages, len(page.Items))
				}
				paged = append(paged, ids(page.Items)...)
				if pages == 1 {
					firstCursor = page.Cursor
				}
				if !page.HasMore() {
					break
				}
				cursor = page.Cursor
			}
			same("pages of 50", paged, want(0, 2500))
			e.Equal("pages", pages <= 51, true)
			page, err := s.Page(ctx, abstractions.Query[Customer]{Partition: "big", Take: 50, Cursor: firstCursor})
			e.OK("a cursor replayed", err)
			e.Equal("replayed page", strings.Join(ids(page.Items), ","), strings.Join(want(50, 100), ","))

			c, ct := countingStoreOf[Customer](e)
			for _, q := range []abstractions.Query[Customer]{
				{Partition: "other", Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 51, Cursor: firstCursor},
				{Partition: "big", RowKeyPrefix: "0", Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 50, Where: abstractions.Field(func(c *Customer) *float64 { return &c.Balance }).Gt(1), Cursor: firstCursor},
				{Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 50, Cursor: "not a cursor"},
				{Partition: "big", Take: 50, Cursor: firstCursor + "x"},
				{Partition: "big", Take: 1001},
			} {
				_, err := c.Page(ctx, q)
				e.Is(fmt.Sprintf("page refused: partition=%q prefix=%q take=%d", q.Partition, q.RowKeyPrefix, q.Take), err, abstractions.ErrInvalidArgument)
			}
			e.Equal("refused cursors sent nothing", ct.n.Load(), int64(0))

			page, err = s.Page(ctx, abstractions.Query[Customer]{Partition: "big"})
			e.OK("default page size", err)
			e.Equal("default page size", len(page.Items), abstractions.DefaultPageSize)
			page, err = s.Page(ctx, abstractions.Query[Customer]{Partition: "big", Take: 1000})
			e.OK("page of 1000", err)
			e.Equal("page of 1000", len(page.Items), 1000)
			page, err = s.Page(ctx, abstractions.Query[Customer]{Partition: "big", RowKeyPrefix: "024", Take: 1000})
			e.OK("last page", err)
			e.Equal("last page", len(page.Items) == 100 && !page.HasMore(), true)

			found, err := s.Any(ctx, abstractions.Query[Customer]{Partition: "big"})
			e.OK("any", err)
			e.Equal("any", found, true)
			found, err = s.Any(ctx, abstractions.Query[Customer]{Partition: "big", Where: abstractions.Field(func(c *Customer) *float64 { return &c.Balance }).Gt(2498)})
			e.OK("any filtered", err)
			e.Equal("any filtered", found, true)
			found, err = s.Any(ctx, abstractions.Query[Customer]{Partition: "nowhere"})
			e.OK("any none", err)
			e.Equal("any none", found, false)
			n, err := s.Count(ctx, "big")
			e.OK("count", err)
			e.Equal("count", n, 2500)
		},
	},
	{
		Name: "store/query-projection",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Item](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()))
			for _, c := range []struct {
				name string
				sel  []abstractions.Selector[Item]
			}{
				{"name", []abstractions.Selector[Item]{fName}},
				{"nested struct", []abstractions.Selector[Item]{fHome}},
				{"nested field and json", []abstractions.Selector[Item]{fCity, fTags}},
				{"pointer and enum", []abstractions.Selector[Item]{fNick, fLevel, fWhen}},
				{"none", []abstractions.Selector[Item]{}},
			} {
				got, err := s.Query(ctx, abstractions.Query[Item]{Partition: "p", Select: c.sel, Take: 4})
				e.OK("select "+c.name, err)
				for _, it := range got {
					e.Observe("select "+c.name, item(it))
					if it.ETag == "" || it.Timestamp.IsZero() {
						e.Errorf("select %s: %s has no ETag or Timestamp", c.name, it.ID)
					}
				}
			}
			c, ct := countingStoreOf[Item](e)
			_, err := c.Query(ctx, abstractions.Query[Item]{Select: []abstractions.Selector[Item]{abstractions.Field(func(i *Item) *string { return &i.Secret })}})
			e.Is("select a field without a column", err, abstractions.ErrNotSupported)
			_, err = c.Query(ctx, abstractions.Query[Item]{Select: []abstractions.Selector[Item]{abstractions.Field(func(i *Item) *string { return &i.Away.City })}})
			e.Is("select below a pointer", err, abstractions.ErrNotSupported)
			e.Equal("refusals sent nothing", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/query-filters",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Item](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()))
			e.OK("elsewhere", s.Create(ctx, &Item{Entity: abstractions.Entity{ID: "other|x"}, Name: "carol", Count: 10, Active: true}))
			for _, f := range supportedFilters() {
				got, err := s.Query(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f})
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
			}
			got, err := s.Query(ctx, abstractions.Query[Item]{Where: fName.Eq("carol")})
			e.OK("across partitions", err)
			e.Observe("across partitions", ids(got))
			combos := []namedFilter{
				{"and", abstractions.And(fActIs, fCount.Ge(0))},
				{"or", abstractions.Or(fName.Eq("alice"), fCount.Gt(30))},
				{"and of or", abstractions.And(abstractions.Or(fCity.Eq("Lviv"), fCity.Eq("Oslo")), fScore.Lt(3))},
				{"or of and", abstractions.Or(abstractions.And(fActIs, fBig.Lt(0)), abstractions.And(fLevel.Eq(High), fSpan.Gt(time.Minute)))},
				{"not of and", abstractions.Not(abstractions.And(fActIs, fCount.Lt(0)))},
				{"not not", abstractions.Not(abstractions.Not(fCount.Eq(10)))},
				{"not of or", abstractions.Not(abstractions.Or(fScore.Gt(2), fBig.Eq(0)))},
				{"single and", abstractions.And(fCount.Eq(0))},
				{"15 comparisons without a partition", abstractions.Or(func() []abstractions.Filter[Item] {
					var fs []abstractions.Filter[Item]
					for i := int32(0); i < 15; i++ {
						fs = append(fs, fCount.Eq(i*10-30))
					}
					return fs
				}()...)},
			}
			for _, f := range combos {
				q := abstractions.Query[Item]{Partition: "p", Where: f.f}
				if strings.HasPrefix(f.name, "15") {
					q.Partition = ""
				}
				got, err := s.Query(ctx, q)
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
			}
			found, err := s.Any(ctx, abstractions.Query[Item]{Partition: "p", Where: fName.Eq("😀")})
			e.OK("any", err)
			e.Equal("any", found, true)
		},
	},
	{
		Name: "store/query-absent-columns",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Item](e, nil)
			old := storeOf[ItemV1](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()[:3]))
			e.OK("old rows", old.CreateBatch(ctx, []*ItemV1{{Entity: abstractions.Entity{ID: "p|old1"}, Name: "alice"}, {Entity: abstractions.Entity{ID: "p|old2"}, Name: "zed"}}))
			for _, f := range []namedFilter{
				{"eq on a missing int", fCount.Eq(0)},
				{"ne on a missing int", fCount.Ne(-30)},
				{"lt on a missing int", fCount.Lt(100)},
				{"not lt on a missing int", abstractions.Not(fCount.Lt(-100))},
				{"bare bool missing", fActIs},
				{"not bare bool missing", abstractions.Not(fActIs)},
				{"pointer eq", fNick.Eq("bo")},
				{"present string", fName.Eq("alice")},
				{"or across", abstractions.Or(fName.Eq("zed"), fCount.Eq(-20))},
			} {
				got, err := s.Query(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f})
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
				for _, it := range got {
					e.Observe(f.name+" row", item(it))
				}
			}
		},
	},
	{
		Name: "store/query-refused-filters",
		Run: func(ctx context.Context, e *Env) {
			s, ct := countingStoreOf[Item](e)
			for _, f := range refusedFilters() {
				_, err := s.Query(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f})
				kind := abstractions.ErrNotSupported
				if strings.HasPrefix(f.name, "empty") || strings.HasPrefix(f.name, "zero filter") {
					kind = abstractions.ErrInvalidArgument
				}
				e.Is(f.name, err, kind)
				if err != nil {
					e.Observe(f.name+" says", strings.ReplaceAll(err.Error(), e.Table, "TABLE"))
				}
				_, err = s.Any(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f})
				e.Is(f.name+" (any)", err, kind)
				for _, err := range s.Stream(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f}) {
					e.Is(f.name+" (stream)", err, kind)
				}
				_, err = s.Page(ctx, abstractions.Query[Item]{Partition: "p", Where: f.f})
				e.Is(f.name+" (page)", err, kind)
			}
			e.Equal("nothing was sent", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/stream-append-log",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Event](e, nil)
			t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
			for i := 0; i < 5; i++ {
				e.OK(fmt.Sprint("main ", i), abstractions.AppendAt(ctx, s, "vision-42", &Event{Text: fmt.Sprint("main ", i)}, "", t0.Add(time.Duration(i)*time.Minute)))
				e.OK(fmt.Sprint("s1 ", i), abstractions.AppendAt(ctx, s, "vision-42", &Event{Text: fmt.Sprint("s1 ", i)}, "Session1", t0.Add(time.Duration(i)*time.Second)))
			}
			e.OK("s2", abstractions.AppendAt(ctx, s, "vision-42", &Event{Text: "s2 0"}, "session2", t0))
			same := &Event{Text: "same tick"}
			e.OK("same tick", abstractions.AppendAt(ctx, s, "vision-42", same, "", t0.Add(4*time.Minute)))
			e.Observe("same tick moves on", same.ID)
			e.Equal("ticks key", same.ID, "vision-42|"+abstractions.InvertedTicks(t0.Add(4*time.Minute+100*time.Nanosecond)))
			texts := func(evs []*Event) []string {
				out := make([]string, len(evs))
				for i, ev := range evs {
					out[i] = ev.Text
				}
				return out
			}
			got, err := abstractions.Recent(ctx, s, "vision-42", 3, "")
			e.OK("recent main", err)
			e.Equal("recent main, newest first", texts(got), []string{"same tick", "main 4", "main 3"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 100, "")
			e.OK("recent main all", err)
			e.Equal("the main log only", len(got), 6)
			got, err = abstractions.Recent(ctx, s, "vision-42", 2, "session1")
			e.OK("recent s1", err)
			e.Equal("recent s1", texts(got), []string{"s1 4", "s1 3"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 10, "session2")
			e.OK("recent s2", err)
			e.Equal("sub-streams isolate", texts(got), []string{"s2 0"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 10, "session")
			e.OK("recent of a name that prefixes others", err)
			e.Equal("a prefix of a sub-stream name is another stream", len(got), 0)
			now := &Event{Text: "now"}
			e.OK("append now", abstractions.Append(ctx, s, "vision-42", now, ""))
			got, err = abstractions.Recent(ctx, s, "vision-42", 1, "")
			e.OK("recent after now", err)
			e.Equal("now is newest", texts(got), []string{"now"})
			e.OK("delete now", s.Delete(ctx, now.ID))
			e.Is("a bad sub-stream", abstractions.AppendAt(ctx, s, "vision-42", &Event{}, "1x", t0), abstractions.ErrInvalidArgument)
			e.Is("a sub-stream with |", abstractions.AppendAt(ctx, s, "vision-42", &Event{}, "a|b", t0), abstractions.ErrInvalidArgument)
			_, err = abstractions.Recent(ctx, s, "vision-42", -1, "")
			e.Is("a negative count", err, abstractions.ErrInvalidArgument)
		},
	},
	{
		Name: "store/stream-versions",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[Snapshot](e, nil)
			for _, v := range []int{1, 2, 3, 5, 8} {
				snap := &Snapshot{State: fmt.Sprint("state ", v)}
				snap.Version = v
				e.OK(fmt.Sprint("append ", v), abstractions.AppendVersion(ctx, s, "order-42", snap))
				e.Observe(fmt.Sprint("id ", v), snap.ID)
			}
			other := &Snapshot{State: "other"}
			other.Version = 100
			e.OK("another stream", abstractions.AppendVersion(ctx, s, "order-43", other))
			dup := &Snapshot{State: "again"}
			dup.Version = 3
			e.Is("a version twice", abstractions.AppendVersion(ctx, s, "order-42", dup), abstractions.ErrDuplicateKey)
			bad := &Snapshot{}
			bad.Version = -1
			e.Is("a negative version", abstractions.AppendVersion(ctx, s, "order-42", bad), abstractions.ErrInvalidArgument)
			state := func(step string, v *Snapshot, err error) {
				if errors.Is(err, abstractions.ErrNotFound) {
					e.Observe(step, "not found")
					return
				}
				e.OK(step, err)
				if v == nil {
					e.Observe(step, "nil")
					return
				}
				e.Observe(step, fmt.Sprintf("%s v%d %s", v.ID, v.Version, v.State))
			}
			v, err := abstractions.Latest(ctx, s, "order-42")
			state("latest", v, err)
			e.Equal("latest", v != nil && v.Version == 8, true)
			v, err = abstractions.AtVersion(ctx, s, "order-42", 2)
			state("at 2", v, err)
			v, err = abstractions.AtVersion(ctx, s, "order-42", 4)
			state("at 4", v, err)
			e.Is("no version 4", err, abstractions.ErrNotFound)
			for _, n := range []int{0, 1, 4, 5, 7, 1000, abstractions.MaxVersion} {
				v, err = abstractions.AtOrBefore(ctx, s, "order-42", n)
				state(fmt.Sprint("at or before ", n), v, err)
			}
			v, err = abstractions.AtOrBefore(ctx, s, "order-42", 6)
			e.OK("as of 6", err)
			e.Equal("as of 6", v != nil && v.Version == 5, true)
			var hist []int
			for v, err := range abstractions.History(ctx, s, "order-42", 3) {
				e.OK("history", err)
				hist = append(hist, v.Version)
			}
			e.Equal("history, newest first", hist, []int{8, 5, 3})
			v, err = abstractions.Latest(ctx, s, "order-44")
			state("latest of an empty stream", v, err)
			e.Is("latest of an empty stream", err, abstractions.ErrNotFound)
			_, err = abstractions.AtOrBefore(ctx, s, "order-42", 0)
			e.Is("before the first version", err, abstractions.ErrNotFound)
			_, err = abstractions.Latest(ctx, s, "order|42")
			e.Is("a stream id with the separator", err, abstractions.ErrInvalidKey)
			v, err = abstractions.AtOrBefore(ctx, s, "order-42", 2)
			state("at or before 2", v, err)
			e.Equal("version keys", abstractions.VersionKey(3), "2147483644")
			if errors.Is(err, abstractions.ErrNotFound) {
				e.Errorf("unexpected not found")
			}
		},
	},
}

// The differential filter test: random filters over a fixed random data set must select the
// same rows on both backends, and the rows a Go evaluation of the filter selects.

// diffNames are the names of the differential data set: quotes, case, non-BMP characters.
var diffNames = []string{"", "a", "A", "alice", "Bob", "it's", "o''k", "émile", "😀", "｡", "zz", "a b"}

// diffItems returns the fixed random data set of the differential test: rows of Item in
// partitions "p" and "q", and rows of ItemV1 (most columns absent).
func diffItems(r *rand.Rand) ([]*Item, []*ItemV1) {
	var items []*Item
	for i := 0; i < 240; i++ {
		it := &Item{
			Entity: abstractions.Entity{ID: fmt.Sprintf("%s|r%03d", []string{"p", "p", "p", "q"}[r.IntN(4)], i)},
			Name:   diffNames[r.IntN(len(diffNames))],
			Count:  int32(r.IntN(7)-3) * 10,
			Big:    []int64{math.MinInt64, -5_000_000_000, -1, 0, 1, 5_000_000_000, math.MaxInt64}[r.IntN(7)],
			Small:  uint16(r.IntN(4)) * 20000,
			Mid:    uint32(r.IntN(4)) * 1_500_000_000,
			Huge:   []uint64{0, 7, math.MaxInt64, 1 << 63, math.MaxUint64}[r.IntN(5)],
			Score:  []float64{-2.5, -0.125, 0, 0.1, 1, 3.75, 1e300}[r.IntN(7)],
			Ratio:  float32(r.IntN(5)) / 4,
			Active: r.IntN(2) == 0,
			Span:   time.Duration(r.IntN(5)-1) * time.Minute,
			Ref:    guidOf(byte(r.IntN(4) * 60)),
			Level:  Level(r.IntN(3)),
			Home:   Address{City: []string{"Lviv", "Oslo", "", "lviv"}[r.IntN(4)]},
		}
		if r.IntN(5) > 0 {
			it.When = baseT.Add(time.Duration(r.IntN(6)) * time.Hour)
		}
		if r.IntN(2) == 0 {
			it.Nick = ptr(diffNames[r.IntN(4)])
			it.Opt = ptr(r.IntN(5) - 2)
			it.Flag = ptr(r.IntN(2) == 0)
		}
		items = append(items, it)
	}
	var old []*ItemV1
	for i := 0; i < 20; i++ {
		old = append(old, &ItemV1{Entity: abstractions.Entity{ID: fmt.Sprintf("p|old%02d", i)}, Name: diffNames[r.IntN(len(diffNames))]})
	}
	return items, old
}

// randomFilter returns a random filter of at most depth levels and at most budget
// comparisons, and the number it holds.
func randomFilter(r *rand.Rand, depth, budget int) (abstractions.Filter[Item], int) {
	if depth > 0 && budget > 1 && r.IntN(3) > 0 {
		switch r.IntN(3) {
		case 0:
			f, n := randomFilter(r, depth-1, budget)
			return abstractions.Not(f), n
		default:
			var fs []abstractions.Filter[Item]
			used := 0
			for k := 2 + r.IntN(2); k > 0 && used < budget; k-- {
				f, n := randomFilter(r, depth-1, budget-used)
				fs = append(fs, f)
				used += n
			}
			if r.IntN(2) == 0 {
				return abstractions.And(fs...), used
			}
			return abstractions.Or(fs...), used
		}
	}
	op := r.IntN(6)
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	switch r.IntN(17) {
	case 0:
		return cmpOf(fName, op, diffNames[r.IntN(len(diffNames))]), 1
	case 1:
		return cmpOf(fCount, op, int32(r.IntN(9)-4)*10), 1
	case 2:
		return cmpOf(fBig, op, pick(int64(math.MinInt64), int64(-5_000_000_000), int64(-2), int64(0), int64(1), int64(math.MaxInt64)).(int64)), 1
	case 3:
		return cmpOf(fSmall, op, uint16(r.IntN(4))*20000), 1
	case 4:
		return cmpOf(fMid, op, uint32(r.IntN(4))*1_500_000_000), 1
	case 5:
		return cmpOf(fHuge, op%2, pick(uint64(0), uint64(7), uint64(math.MaxInt64), uint64(1<<63), uint64(math.MaxUint64)).(uint64)), 1
	case 6:
		return cmpOf(fScore, op, pick(-2.5, -0.125, 0.0, 0.1, 1.0, 2.0, 1e300, -1e300).(float64)), 1
	case 7:
		return cmpOf(fRatio, op, float32(r.IntN(5))/4), 1
	case 8:
		if r.IntN(2) == 0 {
			return fActIs, 0
		}
		return cmpOf(fActive, op, r.IntN(2) == 0), 1
	case 9:
		return cmpOf(fWhen, op, baseT.Add(time.Duration(r.IntN(7)-1)*time.Hour)), 1
	case 10:
		return cmpOf(fSpan, op, time.Duration(r.IntN(5)-1)*time.Minute), 1
	case 11:
		return cmpOf(fRef, op%2, guidOf(byte(r.IntN(4)*60))), 1
	case 12:
		return cmpOf(fLevel, op%2, Level(r.IntN(3))), 1
	case 13:
		return cmpOf(fNick, op, diffNames[r.IntN(4)]), 1
	case 14:
		return cmpOf(fOpt, op, r.IntN(5)-2), 1
	case 15:
		return cmpOf(fFlag, op, r.IntN(2) == 0), 1
	default:
		return cmpOf(fCity, op, pick("Lviv", "Oslo", "", "lviv", "M").(string)), 1
	}
}

func cmpOf[V any](f abstractions.TypedField[Item, V], op int, v V) abstractions.Filter[Item] {
	return []func(V) abstractions.Filter[Item]{f.Eq, f.Ne, f.Lt, f.Le, f.Gt, f.Ge}[op](v)
}

// evalFilter evaluates a filter on an item in Go, with the service's rule for a missing
// column (a nil pointer, the zero time): every comparison on it is false.
func evalFilter(n *abstractions.FilterNode, it *Item) bool {
	switch n.Op {
	case abstractions.FilterAnd:
		for _, o := range n.Operands {
			if !evalFilter(o, it) {
				return false
			}
		}
		return true
	case abstractions.FilterOr:
		for _, o := range n.Operands {
			if evalFilter(o, it) {
				return true
			}
		}
		return false
	case abstractions.FilterNot:
		return !evalFilter(n.Operands[0], it)
	}
	fv := fieldValue(n.Field, it)
	if !fv.IsValid() {
		return false
	}
	if n.Op == abstractions.FilterTrue {
		return fv.Bool()
	}
	c := compareValues(fv, reflect.ValueOf(n.Value))
	switch n.Op {
	case abstractions.FilterEq:
		return c == 0
	case abstractions.FilterNe:
		return c != 0
	case abstractions.FilterLt:
		return c < 0
	case abstractions.FilterLe:
		return c <= 0
	case abstractions.FilterGt:
		return c > 0
	}
	return c >= 0
}

// fieldValue returns the field a reference names, dereferenced, or the zero Value when the
// row would hold no column for it.
func fieldValue(ref abstractions.FieldRef, it *Item) reflect.Value {
	v := reflect.ValueOf(it).Elem()
	var found reflect.Value
	var walk func(v reflect.Value, base uintptr)
	walk = func(v reflect.Value, base uintptr) {
		for i := 0; i < v.NumField() && !found.IsValid(); i++ {
			sf := v.Type().Field(i)
			if base+sf.Offset == ref.Offset && sf.Type == ref.Type {
				found = v.Field(i)
				return
			}
			if sf.Type.Kind() == reflect.Struct && sf.Type != reflect.TypeFor[time.Time]() {
				walk(v.Field(i), base+sf.Offset)
			}
		}
	}
	walk(v, 0)
	if found.Kind() == reflect.Pointer {
		if found.IsNil() {
			return reflect.Value{}
		}
		found = found.Elem()
	}
	if t, ok := found.Interface().(time.Time); ok && t.IsZero() {
		return reflect.Value{}
	}
	return found
}

func compareValues(a, b reflect.Value) int {
	switch x := a.Interface().(type) {
	case string:
		return service.CompareUTF16(x, b.Interface().(string))
	case time.Time:
		return x.Compare(b.Interface().(time.Time))
	case abstractions.GUID:
		if x == b.Interface().(abstractions.GUID) {
			return 0
		}
		return 1
	case bool:
		y := b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float())
	}
	panic(fmt.Sprintf("no comparison for %v", a.Type()))
}

// DiffStore is the differential data set stored on one backend.
type DiffStore struct {
	Backend string
	Store   *engine.Store[Item]
	// Items are the rows written as Item (not ItemV1).
	Items []*Item
}

// NewDiffStore stores the differential data set in a new table of the backend and returns it
// with a function that deletes the table.
func NewDiffStore(ctx context.Context, b Backend) (*DiffStore, func(), error) {
	table := "fuzz" + randomSuffix()
	acct := engine.NewAccount(b.Name, b.Tables, b.Blobs, &engine.Options{Now: storeClock})
	s, err := engine.New[Item](acct, &engine.StoreOptions{Table: table})
	if err != nil {
		return nil, nil, err
	}
	old, err := engine.New[ItemV1](acct, &engine.StoreOptions{Table: table})
	if err != nil {
		return nil, nil, err
	}
	drop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = b.Tables.DeleteTable(cctx, table)
	}
	items, olds := diffItems(rand.New(rand.NewPCG(2026, 11)))
	if err := s.CreateBatch(ctx, items); err != nil {
		drop()
		return nil, nil, err
	}
	if err := old.CreateBatch(ctx, olds); err != nil {
		drop()
		return nil, nil, err
	}
	return &DiffStore{Backend: b.Name, Store: s, Items: items}, drop, nil
}

// CheckRandomFilter runs the random filter of a seed on every store and returns what differs:
// between the backends, or between a backend and the Go evaluation of the filter. refused
// reports a filter every backend refused before sending it.
func CheckRandomFilter(ctx context.Context, seed uint64, stores []*DiffStore) (problem string, refused bool) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	f, _ := randomFilter(r, 3, 14)
	q := abstractions.Query[Item]{Where: f}
	if r.IntN(2) == 0 {
		q.Partition = "p"
	}
	var first string
	for i, ds := range stores {
		got, err := ds.Store.Query(ctx, q)
		var res string
		switch {
		case errors.Is(err, abstractions.ErrNotSupported) || errors.Is(err, abstractions.ErrInvalidArgument):
			res = "refused: " + strings.ReplaceAll(err.Error(), ds.Store.Table(), "T")
			refused = true
		case err != nil:
			return fmt.Sprintf("seed %d on %s: %v", seed, ds.Backend, err), false
		default:
			res = strings.Join(ids(got), " ")
			var want []string
			for _, it := range ds.Items {
				if pk, _ := abstractions.SplitID(it.ID); (q.Partition == "" || pk == q.Partition) && evalFilter(f.Root(), it) {
					want = append(want, it.ID)
				}
			}
			slices.Sort(want) // the keys are ASCII: byte order is the service's order
			var mine []string
			for _, id := range ids(got) {
				if !strings.Contains(id, "|old") {
					mine = append(mine, id)
				}
			}
			if g, w := strings.Join(mine, " "), strings.Join(want, " "); g != w {
				return fmt.Sprintf("seed %d on %s: the service selected\n%s\nGo selects\n%s", seed, ds.Backend, g, w), false
			}
		}
		if i == 0 {
			first = res
		} else if res != first {
			return fmt.Sprintf("seed %d: %s selected\n%s\n%s selected\n%s", seed, stores[0].Backend, first, ds.Backend, res), false
		}
	}
	return "", refused
}
