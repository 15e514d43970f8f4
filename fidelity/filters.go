package fidelity

import (
	"fmt"
	"math"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// The typed filters the query scenarios run, supported and refused, over the fields of itemRow.

// The fields filters are built from, resolved once.
var (
	fName   = abstractions.Field(func(i *itemRow) *string { return &i.Name })
	fCount  = abstractions.Field(func(i *itemRow) *int32 { return &i.Count })
	fBig    = abstractions.Field(func(i *itemRow) *int64 { return &i.Big })
	fSmall  = abstractions.Field(func(i *itemRow) *uint16 { return &i.Small })
	fMid    = abstractions.Field(func(i *itemRow) *uint32 { return &i.Mid })
	fHuge   = abstractions.Field(func(i *itemRow) *uint64 { return &i.Huge })
	fScore  = abstractions.Field(func(i *itemRow) *float64 { return &i.Score })
	fRatio  = abstractions.Field(func(i *itemRow) *float32 { return &i.Ratio })
	fActive = abstractions.Field(func(i *itemRow) *bool { return &i.Active })
	fWhen   = abstractions.Field(func(i *itemRow) *time.Time { return &i.When })
	fSpan   = abstractions.Field(func(i *itemRow) *time.Duration { return &i.Span })
	fRef    = abstractions.Field(func(i *itemRow) *abstractions.GUID { return &i.Ref })
	fLevel  = abstractions.Field(func(i *itemRow) *itemLevel { return &i.Level })
	fNick   = abstractions.NullableField(func(i *itemRow) **string { return &i.Nick })
	fOpt    = abstractions.NullableField(func(i *itemRow) **int { return &i.Opt })
	fFlag   = abstractions.NullableField(func(i *itemRow) **bool { return &i.Flag })
	fCity   = abstractions.Field(func(i *itemRow) *string { return &i.Home.City })
	fHome   = abstractions.Field(func(i *itemRow) *address { return &i.Home })
	fTags   = abstractions.Field(func(i *itemRow) *[]string { return &i.Tags })
	fID     = abstractions.Field(func(i *itemRow) *string { return &i.ID })
	fActIs  = abstractions.IsTrue(fActive)
	baseT   = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	guidOf  = func(b byte) abstractions.GUID {
		return abstractions.GUID{b, 0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, b}
	}
	huge    = uint64(math.MaxUint64 - 5)
	nickAny = "al"
)

// items is the fixed data set of the filter scenarios.
func items() []*itemRow {
	out := make([]*itemRow, 0, 8)
	for i := 0; i < 8; i++ {
		it := &itemRow{
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
			Level:  itemLevel(i % 3),
			Home:   address{City: []string{"Lviv", "Kyiv", "Oslo", "Lviv", "Rome", "Oslo", "Lima", "Kyiv"}[i], Country: "X"},
			Tags:   []string{fmt.Sprint(i)},
		}
		if i%3 != 0 {
			it.Nick = ptr([]string{"al", "bo"}[i%2])
			it.Opt = ptr(i * 3)
			it.Flag = ptr(i%2 == 1)
			it.Away = &address{City: "Far"}
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
	f    abstractions.Filter[itemRow]
}

// supportedFilters is every supported comparison on every supported type.
func supportedFilters() []namedFilter {
	var fs []namedFilter
	add := func(name string, f abstractions.Filter[itemRow]) { fs = append(fs, namedFilter{name, f}) }
	add("name eq", fName.Eq("carol"))
	add("name eq quote", fName.Eq("it's"))
	add("name eq empty", fName.Eq(""))
	add("name lt", fName.Lt("carol"))
	add("name ge", fName.Ge("c"))
	add("name gt non-BMP", fName.Gt("émile"))
	add("name le", fName.Le("Bob"))
	for _, c := range []struct {
		n string
		f func(int32) abstractions.Filter[itemRow]
	}{{"eq", fCount.Eq}, {"ne", fCount.Ne}, {"lt", fCount.Lt}, {"le", fCount.Le}, {"gt", fCount.Gt}, {"ge", fCount.Ge}} {
		add("int32 "+c.n, c.f(10))
		add("int32 negative "+c.n, c.f(-20))
	}
	for _, c := range []struct {
		n string
		f func(int64) abstractions.Filter[itemRow]
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
		f func(float64) abstractions.Filter[itemRow]
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
	add("enum eq", fLevel.Eq(itemLevelMid))
	add("enum ne", fLevel.Ne(itemLevelHigh))
	add("pointer string eq", fNick.Eq(nickAny))
	add("pointer int lt", fOpt.Lt(10))
	add("pointer int ge", fOpt.Ge(10))
	add("pointer bool eq", fFlag.Eq(false))
	add("pointer bool bare", abstractions.IsTrue(fFlag))
	add("nested eq", fCity.Eq("Lviv"))
	add("nested gt", fCity.Gt("Lima"))
	add("id eq", fID.Eq("p|i3"))
	return fs
}

// refusedFilters is every filter shape the translator refuses.
func refusedFilters() []namedFilter {
	far := abstractions.Field(func(i *itemRow) *string { return &i.Away.City })
	secret := abstractions.Field(func(i *itemRow) *string { return &i.Secret })
	etag := abstractions.Field(func(i *itemRow) *string { return &i.ETag })
	blob := abstractions.Field(func(i *itemRow) *[]byte { return &i.Blob })
	outside := abstractions.Field(func(i *itemRow) *string { s := ""; return &s })
	many := make([]abstractions.Filter[itemRow], 14)
	for i := range many {
		many[i] = fCount.Eq(int32(i))
	}
	return []namedFilter{
		{"json field", fTags.Eq([]string{"1"})},
		{"enum ordering", fLevel.Lt(itemLevelHigh)},
		{"uint64 ordering", fHuge.Gt(5)},
		{"guid ordering", fRef.Lt(guidOf(1))},
		{"string ne", fName.Ne("alice")},
		{"negated string", abstractions.Not(fName.Eq("alice"))},
		{"negated string deep", abstractions.Not(abstractions.And(fCount.Eq(1), abstractions.Or(fCount.Eq(2), fCity.Lt("x"))))},
		{"pointer ne", fOpt.Ne(3)},
		{"negated pointer", abstractions.Not(fOpt.Ge(3))},
		{"negated pointer bool", abstractions.Not(fFlag.Eq(true))},
		{"negated pointer bool bare", abstractions.Not(abstractions.IsTrue(fFlag))},
		{"time ne", fWhen.Ne(baseT)},
		{"zero time", fWhen.Lt(time.Time{})},
		{"time before 1601", fWhen.Gt(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"nested by pointer", far.Eq("Far")},
		{"no stored column", secret.Eq("x")},
		{"etag", etag.Eq("x")},
		{"binary", blob.Eq([]byte{1})},
		{"nested struct", fHome.Eq(address{City: "Lviv"})},
		{"selector outside", outside.Eq("x")},
		{"NaN", fScore.Eq(math.NaN())},
		{"infinity", fScore.Lt(math.Inf(1))},
		{"16 comparisons with the partition", abstractions.Or(append(many, fCount.Eq(99))...)},
		{"empty and", abstractions.And[itemRow]()},
		{"empty or", abstractions.Or[itemRow]()},
		{"empty field (the zero TypedField)", abstractions.TypedField[itemRow, string]{}.Eq("x")},
		{"zero filter operand", abstractions.And(fCount.Eq(1), abstractions.Filter[itemRow]{})},
	}
}
