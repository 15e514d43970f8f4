package fidelity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// largeDoc is the split-aware entity of the large-value scenarios.
type largeDoc struct {
	abstractions.Entity
	Title string
	Body  string   `table:",split=text"`
	Data  []byte   `table:",split=binary"`
	Notes []string `table:",split=gzip"`
}

// wideDoc opts every string field in at type level: twenty values of 30,000 characters fit
// a cell each but not one entity together.
type wideDoc struct {
	abstractions.Entity
	_                            struct{} `table:",split=text"`
	A, B, C, D, E, F, G, H, I, J string
	K, L, M, N, O, P, Q, R, S, T string
}

// slotsDoc has 63 large byte fields: a bare entity holds 62 split values.
type slotsDoc struct {
	abstractions.Entity
	S00 []byte `table:",split=gzip"`
	S01 []byte `table:",split=gzip"`
	S02 []byte `table:",split=gzip"`
	S03 []byte `table:",split=gzip"`
	S04 []byte `table:",split=gzip"`
	S05 []byte `table:",split=gzip"`
	S06 []byte `table:",split=gzip"`
	S07 []byte `table:",split=gzip"`
	S08 []byte `table:",split=gzip"`
	S09 []byte `table:",split=gzip"`
	S10 []byte `table:",split=gzip"`
	S11 []byte `table:",split=gzip"`
	S12 []byte `table:",split=gzip"`
	S13 []byte `table:",split=gzip"`
	S14 []byte `table:",split=gzip"`
	S15 []byte `table:",split=gzip"`
	S16 []byte `table:",split=gzip"`
	S17 []byte `table:",split=gzip"`
	S18 []byte `table:",split=gzip"`
	S19 []byte `table:",split=gzip"`
	S20 []byte `table:",split=gzip"`
	S21 []byte `table:",split=gzip"`
	S22 []byte `table:",split=gzip"`
	S23 []byte `table:",split=gzip"`
	S24 []byte `table:",split=gzip"`
	S25 []byte `table:",split=gzip"`
	S26 []byte `table:",split=gzip"`
	S27 []byte `table:",split=gzip"`
	S28 []byte `table:",split=gzip"`
	S29 []byte `table:",split=gzip"`
	S30 []byte `table:",split=gzip"`
	S31 []byte `table:",split=gzip"`
	S32 []byte `table:",split=gzip"`
	S33 []byte `table:",split=gzip"`
	S34 []byte `table:",split=gzip"`
	S35 []byte `table:",split=gzip"`
	S36 []byte `table:",split=gzip"`
	S37 []byte `table:",split=gzip"`
	S38 []byte `table:",split=gzip"`
	S39 []byte `table:",split=gzip"`
	S40 []byte `table:",split=gzip"`
	S41 []byte `table:",split=gzip"`
	S42 []byte `table:",split=gzip"`
	S43 []byte `table:",split=gzip"`
	S44 []byte `table:",split=gzip"`
	S45 []byte `table:",split=gzip"`
	S46 []byte `table:",split=gzip"`
	S47 []byte `table:",split=gzip"`
	S48 []byte `table:",split=gzip"`
	S49 []byte `table:",split=gzip"`
	S50 []byte `table:",split=gzip"`
	S51 []byte `table:",split=gzip"`
	S52 []byte `table:",split=gzip"`
	S53 []byte `table:",split=gzip"`
	S54 []byte `table:",split=gzip"`
	S55 []byte `table:",split=gzip"`
	S56 []byte `table:",split=gzip"`
	S57 []byte `table:",split=gzip"`
	S58 []byte `table:",split=gzip"`
	S59 []byte `table:",split=gzip"`
	S60 []byte `table:",split=gzip"`
	S61 []byte `table:",split=gzip"`
	S62 []byte `table:",split=gzip"`
}

// legacyNote is a split-aware type as it was before a rename: its values are stored under
// the columns Old and Tags.
type legacyNote struct {
	abstractions.Entity
	Old  string   `table:",split=text"`
	Tags []string `table:",split=gzip"`
}

// renamedNote is legacyNote after renaming Old to Body and Tags to Labels: the aliases read
// the values stored under the old names, in every form.
type renamedNote struct {
	abstractions.Entity
	Body   string   `table:",split=text,alias=Old"`
	Labels []string `table:",split=gzip,alias=Tags"`
}

// plainNote shares a table with largeDoc without opting its fields in.
type plainNote struct {
	abstractions.Entity
	Title string
	Body  string
	Data  []byte
}

// longNamesDoc has large-value columns whose names make the projection of the read before
// a write longer than 2,000 characters as a URL-encoded $select: that read fetches the whole
// row instead.
type longNamesDoc struct {
	abstractions.Entity
	_                                                                                                                                                                                                                                                    struct{} `table:",split=text"`
	ChapterOneOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater   string
	ChapterTwoOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater   string
	ChapterThreeOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater string
	ChapterFourOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater  string
	ChapterFiveOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater  string
	ChapterSixOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater   string
	ChapterSevenOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater string
	ChapterEightOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater string
}

// badSplit misuses split= on a native scalar.
type badSplit struct {
	abstractions.Entity
	Count int `table:",split=text"`
}

// digestRows renders raw rows compactly: small cells as they are, large ones by kind, size
// and the start of their SHA-256, so two backends' rows compare cell for cell without
// megabytes of observations.
func digestRows(rows []service.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%s|%s:", r.PartitionKey, r.RowKey)
		props := append([]service.Property(nil), r.Properties...)
		sortProps(props)
		for _, p := range props {
			v := p.Value
			switch {
			case v.Kind() == service.KindDateTime:
				b.WriteString(" " + p.Name + "=time")
			case v.Size() <= 80:
				b.WriteString(" " + p.Name + "=" + v.String())
			case v.Kind() == service.KindString:
				sum := sha256.Sum256([]byte(v.Str()))
				fmt.Fprintf(&b, " %s=%v(units=%d sha=%s)", p.Name, v.Kind(), service.UTF16Len(v.Str()), hex.EncodeToString(sum[:4]))
			default:
				sum := sha256.Sum256(v.Bytes())
				fmt.Fprintf(&b, " %s=%v(len=%d sha=%s)", p.Name, v.Kind(), len(v.Bytes()), hex.EncodeToString(sum[:4]))
			}
		}
		out[i] = b.String()
	}
	return out
}

func sortProps(props []service.Property) {
	for i := 1; i < len(props); i++ {
		for j := i; j > 0 && props[j].Name < props[j-1].Name; j-- {
			props[j], props[j-1] = props[j-1], props[j]
		}
	}
}

// observeRows records the table's raw rows as digests.
func (e *Env) observeRows(ctx context.Context, step string) []service.Row {
	e.t.Helper()
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
	if err != nil {
		e.Fatalf("%s: %v", step, err)
	}
	e.Observe(step, digestRows(rows))
	return rows
}

// clearTable deletes every row the scenario left, so the dump of rows left behind stays
// small (the digests above recorded them).
func (e *Env) clearTable(ctx context.Context) {
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Select: []string{}})
	if err != nil {
		e.Fatalf("clear: %v", err)
	}
	for _, r := range rows {
		_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}})
		if err != nil && !abstractions.HasStatus(err, 404, "") {
			e.Fatalf("clear %s: %v", r.RowKey, err)
		}
	}
}

// pattern returns n deterministic pseudo-random bytes.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n - n%8; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// cyrillic returns n characters of Russian text.
func cyrillic(n int) string {
	const words = "съешь же ещё этих мягких французских булок да выпей чаю "
	r := []rune(strings.Repeat(words, n/len([]rune(words))+1))
	return string(r[:n])
}

// sameDoc reports whether a read returned exactly what was written.
func sameDoc(a, b *largeDoc) bool {
	return a.Title == b.Title && a.Body == b.Body && bytes.Equal(a.Data, b.Data) && reflect.DeepEqual(a.Notes, b.Notes)
}

// roundTrip creates d, reads it back and records the raw rows.
func roundTrip(ctx context.Context, e *Env, s *tables.Store[largeDoc], step string, d *largeDoc) {
	e.t.Helper()
	want := *d
	e.OK(step+": create", s.Create(ctx, d))
	got, err := s.One(ctx, d.ID)
	e.OK(step+": read", err)
	e.Equal(step+": read back whole", sameDoc(got, &want), true)
	e.observeRows(ctx, step+": rows")
}

func largeScenarios() []Scenario {
	return append(largeScenariosMore(), []Scenario{
		{
			Name: "large/tier-boundaries",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				roundTrip(ctx, e, s, "text 32768 units (one cell)", &largeDoc{Entity: abstractions.Entity{ID: "p|t1"}, Body: strings.Repeat("a", 32768)})
				roundTrip(ctx, e, s, "text 32769 units (split)", &largeDoc{Entity: abstractions.Entity{ID: "p|t2"}, Body: strings.Repeat("a", 32769)})
				roundTrip(ctx, e, s, "binary 65536 bytes (one cell)", &largeDoc{Entity: abstractions.Entity{ID: "p|b1"}, Data: pattern(65536, 1)})
				roundTrip(ctx, e, s, "binary 65537 bytes (split)", &largeDoc{Entity: abstractions.Entity{ID: "p|b2"}, Data: pattern(65537, 2)})
				e.clearTable(ctx)
				roundTrip(ctx, e, s, "binary 2,900,000 bytes (one transaction)", &largeDoc{Entity: abstractions.Entity{ID: "p|b3"}, Data: pattern(2_900_000, 3)})
				e.clearTable(ctx)
				err := s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|b4"}, Data: pattern(3_000_000, 4)})
				e.Is("binary 3,000,000 bytes needs a blob", err, abstractions.ErrOversizedValue)
				e.observeRows(ctx, "nothing stored")
			},
		},
		{
			Name: "large/cyrillic-700k",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				roundTrip(ctx, e, s, "700,000 Cyrillic characters", &largeDoc{Entity: abstractions.Entity{ID: "p|ru"}, Title: "война и мир", Body: cyrillic(700_000)})
				n, err := s.Count(ctx, "p")
				e.OK("count", err)
				e.Equal("one entity", n, 1)
				list, err := s.List(ctx, "p")
				e.OK("list", err)
				e.Equal("list returns the entity whole", len(list) == 1 && list[0].Body == cyrillic(700_000), true)
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/binary-2mb",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				roundTrip(ctx, e, s, "2 MiB of binary", &largeDoc{Entity: abstractions.Entity{ID: "p|bin"}, Data: pattern(2<<20, 7)})
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/many-inline-values",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[wideDoc](e, nil)
				d := &wideDoc{Entity: abstractions.Entity{ID: "p|wide"}}
				v := reflect.ValueOf(d).Elem()
				for i := 0; i < 20; i++ {
					// Each value fits a cell; together they are 1.2 MB as the service counts.
					v.FieldByName(string(rune('A' + i))).SetString(strings.Repeat(string(rune('a'+i)), 30000-i))
				}
				want := *d
				e.OK("create", s.Create(ctx, d))
				got, err := s.One(ctx, "p|wide")
				e.OK("read", err)
				got.Entity, want.Entity = abstractions.Entity{}, abstractions.Entity{}
				e.Equal("read back whole", reflect.DeepEqual(*got, want), true)
				e.observeRows(ctx, "the largest values moved to split form")
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/split-value-limit",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[slotsDoc](e, nil)
				fill := func(n int) *slotsDoc {
					d := &slotsDoc{}
					v := reflect.ValueOf(d).Elem()
					for i := 0; i < n; i++ {
						v.FieldByName(fmt.Sprintf("S%02d", i)).SetBytes(bytes.Repeat([]byte{byte(i)}, 70000))
					}
					return d
				}
				d := fill(62)
				d.ID = "p|62"
				e.OK("62 split values", s.Create(ctx, d))
				got, err := s.One(ctx, "p|62")
				e.OK("read 62", err)
				e.Equal("read back whole", len(got.S61) == 70000 && got.S61[0] == 61 && got.S62 == nil, true)
				e.observeRows(ctx, "62 split values: a full main row and one continuation row")
				d = fill(63)
				d.ID = "p|63"
				err = s.Create(ctx, d)
				e.Is("63 split values", err, abstractions.ErrOversizedValue)
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/shrinking-rewrite",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				d := &largeDoc{Entity: abstractions.Entity{ID: "p|s"}, Body: strings.Repeat("x", 600_000), Notes: []string{"a", "b"}}
				e.OK("create with continuation rows", s.Create(ctx, d))
				e.observeRows(ctx, "grown")
				d.Body = strings.Repeat("y", 40_000)
				e.OK("upsert a shorter value", s.Upsert(ctx, d))
				e.observeRows(ctx, "shrunk: the stale continuation rows are gone")
				got, err := s.One(ctx, "p|s")
				e.OK("read", err)
				e.Equal("shrunk value", got.Body == d.Body && reflect.DeepEqual(got.Notes, d.Notes), true)
				got.Body = "short"
				e.OK("strict update", s.Update(ctx, got, abstractions.Strict))
				e.observeRows(ctx, "one cell again")
				stale := *got
				stale.ETag = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`
				e.Is("strict update of another version", s.Update(ctx, &stale, abstractions.Strict), abstractions.ErrConcurrencyConflict)
				e.Deleted("delete", true)(s.Delete(ctx, "p|s", ""))
				e.observeRows(ctx, "deleted")
			},
		},
		{
			Name: "large/conditional-delete",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				d := &largeDoc{Entity: abstractions.Entity{ID: "p|c"}, Body: strings.Repeat("x", 600_000)}
				e.OK("create with continuation rows", s.Create(ctx, d))
				stale := d.ETag
				d.Title = "moved on"
				e.OK("strict update", s.Update(ctx, d, abstractions.Strict))
				deleted, err := s.Delete(ctx, "p|c", stale)
				e.Is("delete at a stale version", err, abstractions.ErrConcurrencyConflict)
				e.Equal("a stale delete deletes nothing", deleted, false)
				e.observeRows(ctx, "every row stays")
				e.Deleted("delete at the current version", true)(s.Delete(ctx, "p|c", d.ETag))
				e.observeRows(ctx, "the continuation rows went with it")
				e.Deleted("a conditional delete of a missing entity", false)(s.Delete(ctx, "p|c", d.ETag))
			},
		},
		{
			Name: "large/leftover-taken-back",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				// Leftover continuation rows of "l", as a writer that does not know them leaves.
				for _, k := range []string{"l~0001", "l~0007"} {
					_, err := e.Tables.Write(ctx, e.Table, insert(row("p", k, "_SplitOf", service.String("l"), "_SplitIndex", service.Int32(1),
						"Body__c9", service.String("old"))))
					e.OK("leftover "+k, err)
				}
				n, err := s.Count(ctx, "p")
				e.OK("count", err)
				e.Equal("leftovers are not counted", n, 0)
				_, err = s.One(ctx, "p|l~0001")
				e.Is("a leftover is not an entity", err, abstractions.ErrNotFound)
				all, err := s.Query(ctx, abstractions.Query[largeDoc]{Partition: "p"})
				e.OK("query", err)
				e.Equal("query returns no leftover", len(all), 0)
				d := &largeDoc{Entity: abstractions.Entity{ID: "p|l"}, Body: strings.Repeat("z", 600_000)}
				e.OK("create takes the leftovers back", s.Create(ctx, d))
				e.observeRows(ctx, "taken back")
				got, err := s.One(ctx, "p|l")
				e.OK("read", err)
				e.Equal("whole", got.Body == d.Body, true)
				// A row at a continuation key that is not a continuation row is never overwritten.
				_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "f~0001", "Other", service.String("mine"))))
				e.OK("foreign row", err)
				err = s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|f"}, Body: strings.Repeat("z", 600_000)})
				e.Is("a foreign row holds the key", err, abstractions.ErrInvalidKey)
				e.Deleted("delete of an id with no row", false)(s.Delete(ctx, "p|gone", ""))
				e.observeRows(ctx, "after")
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/damaged",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				d := &largeDoc{Entity: abstractions.Entity{ID: "p|d"}, Body: strings.Repeat("q", 600_000)}
				e.OK("create", s.Create(ctx, d))
				_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, IfMatch: "*",
					Row: row("p", "d~0001", "Body__c16", service.String("tampered"))})
				e.OK("damage a chunk", err)
				_, err = s.One(ctx, "p|d")
				e.Is("read of a damaged chunk", err, abstractions.ErrIntegrity)
				_, err = s.Query(ctx, abstractions.Query[largeDoc]{Partition: "p"})
				e.Is("query of a damaged chunk", err, abstractions.ErrIntegrity)
				ok, err := s.Exists(ctx, "p|d")
				e.OK("exists", err)
				e.Equal("a damaged row exists", ok, true)
				e.Deleted("delete a damaged row", true)(s.Delete(ctx, "p|d", ""))
				e.observeRows(ctx, "deleted with its continuation rows")

				e.OK("create again", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|d"}, Body: strings.Repeat("q", 600_000)}))
				_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, IfMatch: "*",
					Row: row("p", "d", "_SplitParts", service.String("broken"))})
				e.OK("damage the part count", err)
				_, err = s.One(ctx, "p|d")
				e.Is("read of a damaged part count", err, abstractions.ErrIntegrity)
				e.Is("upsert over a damaged part count", s.Upsert(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|d"}}), abstractions.ErrIntegrity)
				e.Deleted("delete a row whose part count cannot be read", true)(s.Delete(ctx, "p|d", ""))
				e.observeRows(ctx, "all gone")
			},
		},
		{
			Name: "large/keys",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				e.Is("create at a continuation key", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|r~0001"}}), abstractions.ErrInvalidKey)
				e.Is("upsert batch at a continuation key", func() error {
					_, err := s.UpsertBatch(ctx, []*largeDoc{{Entity: abstractions.Entity{ID: "p|ok"}}, {Entity: abstractions.Entity{ID: "p|a~b~0042"}}})
					return err
				}(), abstractions.ErrInvalidKey)
				e.OK("other tildes are keys", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|a~0001x"}}))
				e.Is("a 481-unit row key", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|" + strings.Repeat("k", 481)}}), abstractions.ErrInvalidKey)
				e.Deleted("delete at a continuation key is a no-op", false)(s.Delete(ctx, "p|r~0001", ""))
				_, err := tables.For[badSplit](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: e.Table})
				e.Is("split= on an int", err, abstractions.ErrNotSupported)
				e.Equal("the refusal names the field", err != nil && strings.Contains(err.Error(), "Count"), true)
				e.observeRows(ctx, "rows")
			},
		},
		{
			Name: "large/batches-pages-counts",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				var docs []*largeDoc
				for i := 0; i < 4; i++ {
					docs = append(docs, &largeDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|b%d", i)}, Body: strings.Repeat(string(rune('a'+i)), 300_000*(i%2)+10)})
				}
				e.OK("create batch", s.CreateBatch(ctx, docs))
				e.observeRows(ctx, "each entity's rows in one transaction")
				up := []*largeDoc{
					{Entity: abstractions.Entity{ID: "p|b1"}, Body: "first"},
					{Entity: abstractions.Entity{ID: "p|b2"}, Body: strings.Repeat("w", 500_000)},
					{Entity: abstractions.Entity{ID: "p|b1"}, Body: "last"},
				}
				n, err := s.UpsertBatch(ctx, up)
				e.OK("upsert batch", err)
				e.Equal("entities passed", n, 3)
				got, err := s.One(ctx, "p|b1")
				e.OK("read", err)
				e.Equal("the last occurrence wins", got.Body, "last")
				c, err := s.Count(ctx, "p")
				e.OK("count", err)
				e.Equal("entities counted", c, 4)
				var pages []int
				q := abstractions.Query[largeDoc]{Partition: "p", Take: 2}
				for i := 0; i < 10; i++ {
					pg, err := s.Page(ctx, q)
					e.OK(fmt.Sprintf("page %d", i), err)
					pages = append(pages, len(pg.Items))
					if pg.Cursor == "" {
						break
					}
					q.Cursor = pg.Cursor
				}
				e.Observe("page sizes (a continuation row takes a place)", pages)
				streamed := 0
				for v, err := range s.Stream(ctx, abstractions.Query[largeDoc]{Partition: "p"}) {
					e.OK("stream", err)
					if v != nil {
						streamed++
					}
				}
				e.Equal("streamed entities", streamed, 4)
				deleted, err := s.DeletePartition(ctx, "p")
				e.OK("delete partition", err)
				e.Equal("entities deleted", deleted, 4)
				e.observeRows(ctx, "partition empty")
			},
		},
		{
			Name: "large/partition-delete-races-growing-upsert",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				e.OK("small entity", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|g"}, Body: "small"}))
				var wg sync.WaitGroup
				var upErr, delErr error
				wg.Add(2)
				go func() {
					defer wg.Done()
					upErr = s.Upsert(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|g"}, Body: strings.Repeat("g", 700_000)})
				}()
				go func() {
					defer wg.Done()
					_, delErr = s.DeletePartition(ctx, "p")
				}()
				wg.Wait()
				e.OK("upsert", upErr)
				e.OK("delete partition", delErr)
				rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
				e.OK("rows", err)
				// Whole or gone: either no row at all, or the main row with every
				// continuation row it declares, and the entity reads back whole.
				got, err := s.One(ctx, "p|g")
				whole := len(rows) == 0 && errors.Is(err, abstractions.ErrNotFound) ||
					err == nil && got.Body == strings.Repeat("g", 700_000) && len(rows) >= 2
				e.Equal("whole or gone", whole, true)
				e.clearTable(ctx)
			},
		},
		{
			Name: "large/concurrent-upserts-and-reads",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				// Every version is one letter repeated, at a size that needs continuation
				// rows; a read that mixed two versions would hold two letters.
				version := func(i int) string { return strings.Repeat(string(rune('a'+i)), 400_000+50_000*(i%3)) }
				e.OK("create", s.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|c"}, Body: version(0)}))
				var wg sync.WaitGroup
				var mu sync.Mutex
				mixed, writeErrs, readErrs := 0, 0, 0
				for w := 1; w <= 3; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 3; i++ {
							err := s.Upsert(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|c"}, Body: version(w*3 + i)})
							if err != nil && !errors.Is(err, abstractions.ErrConcurrencyConflict) {
								mu.Lock()
								writeErrs++
								mu.Unlock()
							}
						}
					}()
				}
				for r := 0; r < 2; r++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 6; i++ {
							got, err := s.One(ctx, "p|c")
							mu.Lock()
							switch {
							case err != nil && !errors.Is(err, abstractions.ErrConcurrencyConflict):
								readErrs++
							case err == nil && (got.Body == "" || strings.Count(got.Body, got.Body[:1]) != len(got.Body)):
								mixed++
							}
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				e.Equal("writes that failed other than by a lost race", writeErrs, 0)
				e.Equal("reads that failed other than by a changing row", readErrs, 0)
				e.Equal("reads that mixed two versions", mixed, 0)
				got, err := s.One(ctx, "p|c")
				e.OK("final read", err)
				e.Equal("the final version is whole", strings.Count(got.Body, got.Body[:1]) == len(got.Body), true)
				e.clearTable(ctx)
			},
		},
	}...)
}

// largeScenariosMore are the scenarios of ETags after split writes, aliases, plain readers,
// blob references and the read before a write of a type with long column names.
func largeScenariosMore() []Scenario {
	return []Scenario{
		{
			// A write that needs a transaction takes the main row's version from the
			// transaction's response: the entity can be updated strictly at once.
			Name: "large/etag-after-split-write",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[largeDoc](e, nil)
				d := &largeDoc{Entity: abstractions.Entity{ID: "p|e"}, Body: strings.Repeat("e", 600_000)}
				e.OK("create with continuation rows", s.Create(ctx, d))
				got, err := s.One(ctx, "p|e")
				e.OK("read", err)
				e.Equal("create returns the stored version", d.ETag != "" && d.ETag == got.ETag && d.Timestamp.Equal(got.Timestamp), true)
				d.Body = strings.Repeat("f", 700_000)
				e.OK("strict update with the version create returned", s.Update(ctx, d, abstractions.Strict))
				got, err = s.One(ctx, "p|e")
				e.OK("read again", err)
				e.Equal("update returns the stored version", d.ETag == got.ETag && got.Body == d.Body, true)
				e.OK("upsert", s.Upsert(ctx, d))
				got, err = s.One(ctx, "p|e")
				e.OK("read after upsert", err)
				e.Equal("upsert returns the stored version", d.ETag == got.ETag, true)
				batch := []*largeDoc{{Entity: abstractions.Entity{ID: "p|e"}, Body: strings.Repeat("g", 600_000)}}
				_, err = s.UpsertBatch(ctx, batch)
				e.OK("upsert batch", err)
				e.Equal("a batch reports no version", batch[0].ETag, "")
				e.clearTable(ctx)
			},
		},
		{
			// Values stored under the old names of renamed fields are read in every form;
			// the next write stores them under the new names and drops the old rows.
			Name: "large/aliases",
			Run: func(ctx context.Context, e *Env) {
				old := storeOf[legacyNote](e, nil)
				renamed := storeOf[renamedNote](e, nil)
				tags := []string{strings.Repeat("t", 40_000), "u"}
				for _, n := range []struct {
					id, body string
				}{{"p|cell", "short"}, {"p|main", strings.Repeat("m", 50_000)}, {"p|conts", cyrillic(700_000)}} {
					e.OK("write "+n.id+" under the old names", old.Create(ctx, &legacyNote{Entity: abstractions.Entity{ID: n.id}, Old: n.body, Tags: tags}))
					got, err := renamed.One(ctx, n.id)
					e.OK("read "+n.id+" through the aliases", err)
					e.Equal("read "+n.id+" whole", err == nil && got.Body == n.body && reflect.DeepEqual(got.Labels, tags), true)
				}
				e.observeRows(ctx, "rows under the old names")
				list, err := renamed.List(ctx, "p")
				e.OK("list through the aliases", err)
				e.Equal("listed whole", len(list) == 3 && list[1].ID == "p|conts" && list[1].Body == cyrillic(700_000), true)
				got, err := renamed.One(ctx, "p|conts")
				e.OK("read", err)
				got.Body = "rewritten"
				e.OK("strict update through the new type", renamed.Update(ctx, got, abstractions.Strict))
				e.observeRows(ctx, "rewritten under the new names, old continuation rows gone")
				// The column's own value wins over an old one.
				_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, IfMatch: "*",
					Row: row("p", "conts", "Old", service.String("stale"))})
				e.OK("an old cell beside the new one", err)
				got, err = renamed.One(ctx, "p|conts")
				e.OK("read", err)
				e.Equal("the column's own value wins", got.Body, "rewritten")
				e.clearTable(ctx)
			},
		},
		{
			// A type that does not opt a field in reads a value another type stored split
			// when its chunks are all on the main row, and refuses one that continues on
			// continuation rows; cells that merely have a manifest's names are ignored.
			Name: "large/plain-reader",
			Run: func(ctx context.Context, e *Env) {
				large := storeOf[largeDoc](e, nil)
				plain := storeOf[plainNote](e, nil)
				body, data := strings.Repeat("b", 50_000), pattern(100_000, 9)
				e.OK("write split on the main row", large.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "a|main"}, Title: "t", Body: body, Data: data}))
				got, err := plain.One(ctx, "a|main")
				e.OK("plain read", err)
				e.Equal("plain read reassembles", err == nil && got.Body == body && bytes.Equal(got.Data, data) && got.Title == "t", true)
				list, err := plain.List(ctx, "a")
				e.OK("plain list", err)
				e.Equal("plain list reassembles", len(list) == 1 && list[0].Body == body, true)

				e.OK("write split on continuation rows", large.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "b|conts"}, Body: strings.Repeat("c", 700_000)}))
				_, err = plain.One(ctx, "b|conts")
				e.Is("plain read of a value on continuation rows", err, abstractions.ErrIntegrity)
				_, err = plain.List(ctx, "b")
				e.Is("plain list of a value on continuation rows", err, abstractions.ErrIntegrity)
				_, err = plain.One(ctx, "b|conts~0001")
				e.Is("a continuation row is not an entity of the plain type", err, abstractions.ErrNotFound)

				_, err = e.Tables.Write(ctx, e.Table, insert(row("c", "other", "Title", service.String("x"),
					"Body", service.String("kept"), "Body__len", service.Int64(4), "Body__chunks", service.String("n/a"))))
				e.OK("cells that merely have a manifest's names", err)
				got, err = plain.One(ctx, "c|other")
				e.OK("read them", err)
				e.Equal("they are ignored", err == nil && got.Body == "kept", true)
				e.clearTable(ctx)
			},
		},
		{
			// A value held in a blob (written by a library that offloads values) is never
			// read as empty; a write replaces it.
			Name: "large/blob-reference",
			Run: func(ctx context.Context, e *Env) {
				var warnings bytes.Buffer
				s := storeOf[largeDoc](e, &tables.Options{Logger: slog.New(slog.NewTextHandler(&warnings, nil))})
				_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "off", "Id", service.String("p|off"), "Title", service.String("t"),
					"Body__blob", service.String(`{"c":"blobs","n":"t/p/off/Body/00"}`))))
				e.OK("a row with a blob reference", err)
				_, err = s.One(ctx, "p|off")
				e.Is("read", err, abstractions.ErrBlobOffloadNotConfigured)
				_, err = s.List(ctx, "p")
				e.Is("list", err, abstractions.ErrBlobOffloadNotConfigured)
				ok, err := s.Exists(ctx, "p|off")
				e.OK("exists", err)
				e.Equal("the row exists", ok, true)
				e.OK("upsert replaces it", s.Upsert(ctx, &largeDoc{Entity: abstractions.Entity{ID: "p|off"}, Body: "inline"}))
				e.Equal("the replaced blob reference is logged", strings.Contains(warnings.String(), "columns=[Body]"), true)
				got, err := s.One(ctx, "p|off")
				e.OK("read the new value", err)
				e.Equal("new value", err == nil && got.Body == "inline", true)
				e.observeRows(ctx, "rows")
				e.clearTable(ctx)
			},
		},
		{
			// The read before a write of a type whose large columns' names are long fetches
			// the whole row: the writes work as for any split-aware type.
			Name: "large/long-column-names",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[longNamesDoc](e, nil)
				d := &longNamesDoc{Entity: abstractions.Entity{ID: "p|long"}}
				d.ChapterOneOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater = strings.Repeat("1", 600_000)
				e.OK("create", s.Create(ctx, d))
				d.ChapterOneOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater = "short"
				d.ChapterEightOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater = strings.Repeat("8", 40_000)
				e.OK("upsert a shorter value", s.Upsert(ctx, d))
				e.observeRows(ctx, "shrunk")
				got, err := s.One(ctx, "p|long")
				e.OK("read", err)
				e.Equal("read back", err == nil && got.ChapterEightOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater == d.ChapterEightOfTheCollectedWorksOfAnAuthorWhoseTitlesRunLongerThanMostAndWhoseEditorsInsistedOnKeepingEveryWordOfThemInTheColumnNamesOfTheirArchiveTableBecauseTheyHadBeenPrintedThatWayOnTheSpinesOfTheFirstEditionsAndNobodyWantedToChangeThemLater, true)
				e.Deleted("delete", true)(s.Delete(ctx, "p|long", ""))
				e.observeRows(ctx, "deleted")
			},
		},
	}
}
