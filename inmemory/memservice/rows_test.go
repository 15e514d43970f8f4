package memservice

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

func TestKeys(t *testing.T) {
	long := strings.Repeat("k", maxKeyUnits)
	emoji := strings.Repeat("😀", maxKeyUnits/2)
	tests := []struct {
		name   string
		pk, rk string
		insert string // error code for an insert, "" for success
		url    string // error code for the URL-addressed operations
	}{
		{"empty keys", "", "", "", ""},
		{"plain", "p", "r", "", ""},
		{"odd but allowed", "a b'c%d+e&=:,()*\"~[]|<>;^`{}", "é\u00a0\u2028.", "", ""},
		{"slash in PartitionKey", "a/b", "r", "OutOfRangeInput", "InvalidInput"},
		{"backslash in RowKey", "p", `a\b`, "OutOfRangeInput", "InvalidInput"},
		{"hash", "p", "a#b", "OutOfRangeInput", "InvalidInput"},
		{"question mark", "a?", "r", "OutOfRangeInput", "InvalidInput"},
		{"NUL", "p", "a\x00", "OutOfRangeInput", "InvalidInput"},
		{"unit separator", "\x1f", "r", "OutOfRangeInput", "InvalidInput"},
		{"DEL", "p", "\x7f", "OutOfRangeInput", "InvalidInput"},
		{"C1 control first", "p", "\u0080", "OutOfRangeInput", "InvalidInput"},
		{"C1 control last", "\u009f", "r", "OutOfRangeInput", "InvalidInput"},
		{"1024 units", long, long, "", ""},
		{"1024 units of surrogate pairs", emoji, "r", "", ""},
		{"1025 units", long + "k", "r", "PropertyValueTooLarge", "PropertyValueTooLarge"},
		{"1026 units of surrogate pairs", "p", emoji + "😀", "PropertyValueTooLarge", "PropertyValueTooLarge"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTable(t)
			_, err := s.Write(ctx, "Tab1", insert(row(tc.pk, tc.rk)))
			if tc.insert == "" {
				if err != nil {
					t.Fatalf("insert: %v", err)
				}
			} else {
				wantStatus(t, err, http.StatusBadRequest, tc.insert)
			}
			check := func(what string, err error) {
				t.Helper()
				if tc.url == "" {
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					return
				}
				wantStatus(t, err, http.StatusBadRequest, tc.url)
			}
			_, err = s.GetRow(ctx, "Tab1", tc.pk, tc.rk, nil)
			check("GetRow", err)
			for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpUpsertReplace, service.OpUpsertMerge, service.OpDelete} {
				if tc.url == "" && op == service.OpDelete {
					continue
				}
				_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row(tc.pk, tc.rk)})
				check(op.String(), err)
			}
		})
	}
}

// TestKeyMessage checks the service's wording for a bad key in an insert body.
func TestKeyMessage(t *testing.T) {
	s, _ := newTable(t)
	_, err := s.Write(context.Background(), "Tab1", insert(row("p", "a/b")))
	const want = "The 'RowKey' parameter of value 'a/b' is out of range."
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("error = %v, want message %q", err, want)
	}
}

func manyProps(n int, v service.Value) []service.Property {
	props := make([]service.Property, n)
	for i := range props {
		props[i] = prop(fmt.Sprintf("p%03d", i), v)
	}
	return props
}

func TestProperties(t *testing.T) {
	// 15 strings of 32,768 units plus one of 32,606 units, all with 4-letter names, make a
	// row of exactly 1 MiB with empty keys: 4 + 15·(8+8+4+65,536) + (8+8+4+65,212) = 1,048,576.
	fullRow := manyProps(15, service.String(strings.Repeat("x", service.MaxStringUnits)))
	fullRow = append(fullRow, prop("p015", service.String(strings.Repeat("x", 32606))))

	tests := []struct {
		name   string
		rk     string
		props  []service.Property
		status int
		code   string
	}{
		{"underscore names", "", []service.Property{prop("_x", service.Int32(1)), prop("a_1", service.Int32(2))}, 0, ""},
		{"hyphen", "", []service.Property{prop("a-b", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"space", "", []service.Property{prop("a b", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"leading digit", "", []service.Property{prop("1abc", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"empty name", "", []service.Property{prop("", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"dotted", "", []service.Property{prop("odata.foo", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"Unicode letters", "", []service.Property{prop("Größe", service.Int32(1)), prop("é", service.Int32(2)), prop("名前", service.Int32(3))}, 0, ""},
		{"combining mark and connector", "", []service.Property{prop("e\u0301", service.Int32(1)), prop("a\u203fb", service.Int32(2)), prop("x\u0663", service.Int32(3))}, 0, ""},
		{"leading combining mark", "", []service.Property{prop("\u0301e", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"leading non-ASCII digit", "", []service.Property{prop("\u0663x", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"Unicode hyphen", "", []service.Property{prop("Größe-x", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"symbol", "", []service.Property{prop("a😀", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"invalid UTF-8", "", []service.Property{prop("a\xffb", service.Int32(1))}, 400, "PropertyNameInvalid"},
		{"255 two-byte characters", "", []service.Property{prop(strings.Repeat("ö", 255), service.Int32(1))}, 0, ""},
		{"256 two-byte characters", "", []service.Property{prop(strings.Repeat("ö", 256), service.Int32(1))}, 400, "PropertyNameTooLong"},
		{"PartitionKey", "", []service.Property{prop("PartitionKey", service.String("p"))}, 400, "PropertyNameInvalid"},
		{"RowKey", "", []service.Property{prop("RowKey", service.String("r"))}, 400, "PropertyNameInvalid"},
		{"Timestamp", "", []service.Property{prop("Timestamp", service.DateTime(t0))}, 400, "PropertyNameInvalid"},
		{"255-character name", "", []service.Property{prop(strings.Repeat("n", 255), service.Int32(1))}, 0, ""},
		{"256-character name", "", []service.Property{prop(strings.Repeat("n", 256), service.Int32(1))}, 400, "PropertyNameTooLong"},
		{"duplicate", "", []service.Property{prop("a", service.Int32(1)), prop("a", service.String("x"))}, 400, "DuplicatePropertiesSpecified"},
		{"duplicate among many", "", append(manyProps(40, service.Bool(true)), manyProps(1, service.Int32(1))...), 400, "DuplicatePropertiesSpecified"},
		{"duplicate among a few", "", append(manyProps(20, service.Bool(true)), manyProps(1, service.Int32(1))...), 400, "DuplicatePropertiesSpecified"},
		{"252 properties", "", manyProps(252, service.Bool(true)), 0, ""},
		{"253 properties", "", manyProps(253, service.Bool(true)), 400, "TooManyProperties"},
		{"nulls do not count", "", append(manyProps(252, service.Bool(true)), prop("z", service.Value{})), 0, ""},
		{"32,768-unit string", "", []service.Property{prop("s", service.String(strings.Repeat("x", 32768)))}, 0, ""},
		{"32,769-unit string", "", []service.Property{prop("s", service.String(strings.Repeat("x", 32769)))}, 400, "PropertyValueTooLarge"},
		{"16,384 surrogate pairs", "", []service.Property{prop("s", service.String(strings.Repeat("😀", 16384)))}, 0, ""},
		{"16,385 surrogate pairs", "", []service.Property{prop("s", service.String(strings.Repeat("😀", 16385)))}, 400, "PropertyValueTooLarge"},
		{"65,536-byte binary", "", []service.Property{prop("b", service.Binary(make([]byte, 65536)))}, 0, ""},
		{"65,537-byte binary", "", []service.Property{prop("b", service.Binary(make([]byte, 65537)))}, 400, "PropertyValueTooLarge"},
		{"first DateTime", "", []service.Property{prop("d", service.DateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)))}, 0, ""},
		{"DateTime before 1601", "", []service.Property{prop("d", service.DateTime(time.Date(1600, 12, 31, 23, 59, 59, 999999900, time.UTC)))}, 400, "OutOfRangeInput"},
		{"DateTime at zero", "", []service.Property{prop("d", service.DateTime(time.Time{}))}, 400, "OutOfRangeInput"},
		{"every kind", "", []service.Property{
			prop("s", service.String("x")), prop("b", service.Binary([]byte{1})), prop("t", service.Bool(true)),
			prop("i", service.Int32(-1)), prop("l", service.Int64(1<<40)), prop("f", service.Double(1.5)),
			prop("d", service.DateTime(t0)), prop("g", service.Guid([16]byte{1})),
		}, 0, ""},
		{"row of exactly 1 MiB", "", fullRow, 0, ""},
		{"row of 1 MiB + 2", "x", fullRow, 400, "EntityTooLarge"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []service.Op{service.OpInsert, service.OpUpsertReplace, service.OpUpsertMerge} {
				s, _ := newTable(t)
				_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("", tc.rk, tc.props...)})
				if tc.status == 0 {
					if err != nil {
						t.Fatalf("%v: %v", op, err)
					}
					continue
				}
				wantStatus(t, err, tc.status, tc.code)
				if _, err := s.GetRow(ctx, "Tab1", "", tc.rk, nil); err == nil {
					t.Fatalf("%v: a failed write stored the row", op)
				}
			}
		})
	}
}

func TestEntitySizeFormula(t *testing.T) {
	props := []service.Property{
		prop("s", service.String("ab😀")),          // 8 + 2 + 4 + 8
		prop("bin", service.Binary([]byte{1, 2})), // 8 + 6 + 4 + 2
		prop("t", service.Bool(true)),             // 8 + 2 + 1
		prop("i", service.Int32(1)),               // 8 + 2 + 4
		prop("l", service.Int64(1)),               // 8 + 2 + 8
		prop("f", service.Double(1)),              // 8 + 2 + 8
		prop("d", service.DateTime(t0)),           // 8 + 2 + 8
		prop("g", service.Guid([16]byte{})),       // 8 + 2 + 16
	}
	want := 4 + 2*2 + 2*1 + 22 + 20 + 11 + 14 + 18 + 18 + 18 + 26
	if got := service.EntitySize("pk", "é", props); got != want {
		t.Fatalf("service.EntitySize = %d, want %d (the size the memory service limits)", got, want)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	// 253 binaries of 64 KiB: too many properties, too large values and too large a row,
	// but the service refuses the body first.
	props := manyProps(253, service.Binary(make([]byte, 65537)))
	for _, op := range []service.Op{service.OpInsert, service.OpReplace, service.OpMerge, service.OpUpsertReplace, service.OpUpsertMerge} {
		_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "a/b", props...), IfMatch: `"bad"`})
		wantStatus(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	}
	// A delete has no body.
	_, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpDelete, Row: row("p", "r", props...)})
	wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestWriteOperations(t *testing.T) {
	ctx := context.Background()
	s, c := newTable(t)
	w1 := mustWrite(t, s, insert(row("p", "r", prop("a", service.Int32(1)), prop("b", service.String("x")))))

	_, err := s.Write(ctx, "Tab1", insert(row("p", "r")))
	wantStatus(t, err, http.StatusConflict, "EntityAlreadyExists")

	// Merge keeps the other properties and may change a property's type.
	c.set(t0.Add(time.Second))
	w2 := mustWrite(t, s, service.Action{Op: service.OpMerge, Row: row("p", "r", prop("a", service.String("one")), prop("c", service.Bool(true))), IfMatch: w1.ETag})
	got := mustGet(t, s, "p", "r")
	want := map[string]service.Value{"a": service.String("one"), "b": service.String("x"), "c": service.Bool(true)}
	if !equalProps(propMap(got), want) {
		t.Fatalf("after merge: %v, want %v", got.Properties, want)
	}
	if got.ETag != w2.ETag || !got.Timestamp.Equal(w2.Timestamp) {
		t.Fatalf("GetRow ETag %s %v, Write reported %s %v", got.ETag, got.Timestamp, w2.ETag, w2.Timestamp)
	}

	// The first ETag is stale now.
	for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
		_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "r"), IfMatch: w1.ETag})
		wantStatus(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	}

	// Replace drops the properties it does not carry; "*" matches any row.
	mustWrite(t, s, service.Action{Op: service.OpReplace, Row: row("p", "r", prop("d", service.Int64(4))), IfMatch: "*"})
	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"d": service.Int64(4)}) {
		t.Fatalf("after replace: %v", got)
	}

	// Upserts create, replace and merge without conditions; IfMatch is ignored.
	mustWrite(t, s, service.Action{Op: service.OpUpsertMerge, Row: row("p", "r", prop("e", service.Int32(5))), IfMatch: w1.ETag})
	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"d": service.Int64(4), "e": service.Int32(5)}) {
		t.Fatalf("after upsert merge: %v", got)
	}
	mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", "r", prop("f", service.Int32(6))), IfMatch: "garbage"})
	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"f": service.Int32(6)}) {
		t.Fatalf("after upsert replace: %v", got)
	}
	mustWrite(t, s, service.Action{Op: service.OpUpsertMerge, Row: row("p", "new1", prop("g", service.Int32(7)))})
	mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", "new2", prop("g", service.Int32(7)))})
	mustGet(t, s, "p", "new1")
	mustGet(t, s, "p", "new2")

	// Delete, with an empty IfMatch meaning "*"; a deleted row is missing for every
	// conditional operation, whatever its condition.
	cur := mustGet(t, s, "p", "r")
	if w := mustWrite(t, s, service.Action{Op: service.OpDelete, Row: row("p", "r")}); w != (service.Written{}) {
		t.Fatalf("delete reported %+v, want the zero Written", w)
	}
	_, err = s.GetRow(ctx, "Tab1", "p", "r", nil)
	wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
	for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
		for _, etag := range []string{"", "*", cur.ETag} {
			_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "r"), IfMatch: etag})
			wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
		}
	}

	_, err = s.Write(ctx, "Tab1", service.Action{Op: 0, Row: row("p", "r")})
	wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
}

func TestMalformedETag(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	w := mustWrite(t, s, insert(row("p", "r")))
	// Not an entity tag, or a strong one: 400 InvalidInput, as Azure answers.
	for _, etag := range []string{`"abc"`, "abc", `W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'`, `W/"a"b"`, `W/`} {
		for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
			_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "r"), IfMatch: etag})
			wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
		}
	}
	// A weak entity tag the service did not issue matches no row: 412, as Azure answers.
	for _, etag := range []string{`W/"abc"`, `W/"datetime'nonsense'"`, `W/"datetime'%ZZ'"`} {
		for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
			_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "r"), IfMatch: etag})
			wantStatus(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
		}
	}
	// Another spelling of the same time is the same ETag.
	lower := strings.ReplaceAll(w.ETag, "%3A", "%3a")
	mustWrite(t, s, service.Action{Op: service.OpReplace, Row: row("p", "r"), IfMatch: lower})
}

var etagShape = regexp.MustCompile(`^W/"datetime'(\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z)'"$`)

func TestETagShapeAndMonotonicity(t *testing.T) {
	s, c := newTable(t)
	var last time.Time
	check := func(w service.Written) {
		t.Helper()
		m := etagShape.FindStringSubmatch(w.ETag)
		if m == nil {
			t.Fatalf("ETag %s does not have the service's shape", w.ETag)
		}
		ts, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(m[1], "%3A", ":"))
		if err != nil || !ts.Equal(w.Timestamp) {
			t.Fatalf("ETag %s names %v, Timestamp is %v", w.ETag, ts, w.Timestamp)
		}
		if !w.Timestamp.After(last) {
			t.Fatalf("Timestamp %v does not follow %v", w.Timestamp, last)
		}
		if w.Timestamp.Location() != time.UTC {
			t.Fatalf("Timestamp %v is not in UTC", w.Timestamp)
		}
		last = w.Timestamp
	}
	w := mustWrite(t, s, insert(row("p", "r")))
	check(w)
	if w.ETag != `W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'"` {
		t.Fatalf("ETag = %s", w.ETag)
	}
	// The clock stands still: every write still gets a later stamp, 100 ns apart.
	for i := range 5 {
		check(mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", fmt.Sprint(i))}))
	}
	if want := t0.Add(500 * time.Nanosecond); !last.Equal(want) {
		t.Fatalf("last Timestamp = %v, want %v", last, want)
	}
	// The clock goes back.
	c.set(t0.Add(-time.Hour))
	check(mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", "r")}))
	// The clock moves on, with sub-tick digits the service cannot keep.
	c.set(t0.Add(time.Second + 42))
	w = mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", "r")})
	check(w)
	if !w.Timestamp.Equal(t0.Add(time.Second)) {
		t.Fatalf("Timestamp = %v, want %v", w.Timestamp, t0.Add(time.Second))
	}
}

func TestNoAliasing(t *testing.T) {
	s, _ := newTable(t)
	props := []service.Property{prop("a", service.Int32(1))}
	mustWrite(t, s, insert(row("p", "r", props...)))
	props[0] = prop("b", service.Int32(2))

	got := mustGet(t, s, "p", "r")
	got.Properties[0] = prop("c", service.Int32(3))
	page, err := s.Query(context.Background(), "Tab1", service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	page.Rows[0].Properties[0] = prop("d", service.Int32(4))

	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"a": service.Int32(1)}) {
		t.Fatalf("stored row changed through a caller's slice: %v", got)
	}
}

// TestSharedReads checks WithSharedReads: reads hand out the stored property list itself
// (no copy), clipped so that a reader's append copies it, and a later write replaces the
// stored list rather than changing the one handed out.
func TestSharedReads(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t, WithSharedReads())
	mustWrite(t, s, insert(row("p", "r", prop("a", service.Int32(1)), prop("b", service.Int32(2)))))
	first := mustGet(t, s, "p", "r")
	second := mustGet(t, s, "p", "r")
	page, err := s.Query(ctx, "Tab1", service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if &first.Properties[0] != &second.Properties[0] || &page.Rows[0].Properties[0] != &first.Properties[0] {
		t.Fatal("reads copied the stored properties")
	}
	if cap(first.Properties) != len(first.Properties) {
		t.Fatalf("a shared list has capacity %d for %d properties", cap(first.Properties), len(first.Properties))
	}
	grown := append(first.Properties, prop("c", service.Int32(3)))
	if &grown[0] == &first.Properties[0] || len(mustGet(t, s, "p", "r").Properties) != 2 {
		t.Fatal("an append to a shared list reached the stored row")
	}
	sel, err := s.GetRow(ctx, "Tab1", "p", "r", []string{"a"})
	if err != nil || len(sel.Properties) != 1 || &sel.Properties[0] == &first.Properties[0] {
		t.Fatalf("a selection must be a list of its own: %v, %v", sel.Properties, err)
	}
	mustWrite(t, s, service.Action{Op: service.OpMerge, Row: row("p", "r", prop("a", service.Int32(9)))})
	if first.Properties[0].Value.Int32() != 1 {
		t.Fatal("a write changed a list handed out before it")
	}
	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"a": service.Int32(9), "b": service.Int32(2)}) {
		t.Fatalf("after the merge: %v", got)
	}
}

func TestNullsDropped(t *testing.T) {
	s, _ := newTable(t)
	mustWrite(t, s, insert(row("p", "r", prop("a", service.Int32(1)), prop("n", service.Value{}))))
	mustWrite(t, s, service.Action{Op: service.OpMerge, Row: row("p", "r", prop("a", service.Value{}))})
	if got := propMap(mustGet(t, s, "p", "r")); !equalProps(got, map[string]service.Value{"a": service.Int32(1)}) {
		t.Fatalf("row = %v, want only a=1", got)
	}
}

func TestMergeLimitsApplyToTheResult(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	mustWrite(t, s, insert(row("p", "r", manyProps(200, service.Bool(true))...)))
	more := make([]service.Property, 53)
	for i := range more {
		more[i] = prop(fmt.Sprintf("q%03d", i), service.Bool(false))
	}
	for _, op := range []service.Op{service.OpMerge, service.OpUpsertMerge} {
		_, err := s.Write(ctx, "Tab1", service.Action{Op: op, Row: row("p", "r", more...)})
		wantStatus(t, err, http.StatusBadRequest, "TooManyProperties")
	}
	if n := len(mustGet(t, s, "p", "r").Properties); n != 200 {
		t.Fatalf("a failed merge changed the row: %d properties", n)
	}

	big := service.String(strings.Repeat("x", service.MaxStringUnits))
	mustWrite(t, s, service.Action{Op: service.OpUpsertReplace, Row: row("p", "big", manyProps(10, big)...)})
	extra := make([]service.Property, 10)
	for i := range extra {
		extra[i] = prop(fmt.Sprintf("q%03d", i), big)
	}
	_, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpMerge, Row: row("p", "big", extra...)})
	wantStatus(t, err, http.StatusBadRequest, "EntityTooLarge")
}

func TestSelectOnGetRow(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	mustWrite(t, s, insert(row("p", "r", prop("a", service.Int32(1)), prop("B", service.Int32(2)))))
	got, err := s.GetRow(ctx, "Tab1", "p", "r", []string{"a", "b", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if !equalProps(propMap(got), map[string]service.Value{"a": service.Int32(1)}) {
		t.Fatalf("selected %v, want only a", got.Properties)
	}
	if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag == "" || got.Timestamp.IsZero() {
		t.Fatalf("system fields missing: %+v", got)
	}
	got, err = s.GetRow(ctx, "Tab1", "p", "r", []string{})
	if err != nil || len(got.Properties) != 0 {
		t.Fatalf("empty select: %v, %v", got.Properties, err)
	}
}

// TestSizeBounds checks that the quick bounds Write and checkRow look at first are never
// below the exact sizes, for rows of every kind of value and strings that escape or are
// counted in UTF-16 differently from UTF-8.
func TestSizeBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "😀", "\u2028", "<", ">", "&", "\"", "\\", "\x00", "\x1f", "\x7f", "\xff", "\b", "\f", "\u00a0"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	values := []func() service.Value{
		func() service.Value { return service.String(text()) },
		func() service.Value { return service.Binary([]byte(text())) },
		func() service.Value { return service.Bool(r.IntN(2) == 0) },
		func() service.Value { return service.Int32(int32(r.Uint32())) },
		func() service.Value { return service.Int64(int64(r.Uint64())) },
		func() service.Value { return service.Double(math.Float64frombits(r.Uint64())) },
		func() service.Value { return service.Double(-math.MaxFloat64) },
		func() service.Value { return service.DateTime(time.Unix(r.Int64N(250_000_000_000), 0)) },
		func() service.Value { return service.Guid([16]byte{1}) },
		func() service.Value { return service.Value{} },
	}
	for i := range 5000 {
		a := service.Action{Op: service.OpUpsertReplace, Row: service.Row{PartitionKey: text(), RowKey: text()}}
		for j := range r.IntN(12) {
			a.Row.Properties = append(a.Row.Properties, service.Property{Name: "P" + strconv.Itoa(j) + text(), Value: values[r.IntN(len(values))]()})
		}
		if b, e := bodyBound(&a), service.BodySize(&a); b < e {
			t.Fatalf("row %d: body bound %d below the estimate %d: %+v", i, b, e, a.Row)
		}
		if b, e := entityBound(a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties), service.EntitySize(a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties); b < e {
			t.Fatalf("row %d: entity bound %d below the size %d: %+v", i, b, e, a.Row)
		}
	}
}
