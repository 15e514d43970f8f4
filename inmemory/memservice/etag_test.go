package memservice

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// formatETag writes the service's ETag of a time: the date-time of FormatDateTime, its
// colons escaped, inside W/"datetime'…'", and parseCondition reads that time back.
func TestFormatETagIsTheServiceShape(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	times := []time.Time{t0, minDateTime, maxDateTime, {}}
	for range 1000 {
		times = append(times, time.Unix(r.Int64N(300_000_000_000)-100_000_000_000, r.Int64N(1e9)/100*100).UTC())
	}
	for _, tm := range times {
		want := etagPrefix + strings.ReplaceAll(service.FormatDateTime(tm), ":", "%3A") + etagSuffix
		got := formatETag(tm)
		if got != want {
			t.Fatalf("formatETag(%v) = %q, want %q", tm, got, want)
		}
		if y := tm.Year(); y < 1 || y > 9999 {
			continue // no Edm.DateTime: ReadDateTime refuses the year
		}
		if c, err := parseCondition(got); err != nil || !c.at.Equal(tm) {
			t.Fatalf("parseCondition(%q) = %+v, %v; want the time %v", got, c, err, tm)
		}
	}
}

// etagTime reads the service's own ETags without a copy on the heap; every other spelling of
// a time (a lower-case escape, escaped digits, an offset, no escapes at all) reads as the
// general unescaping reads it.
func TestETagTimeReadsEverySpellingAlike(t *testing.T) {
	for _, inner := range []string{
		"2026-11-29T18%3A30%3A11.1234567Z",
		"2026-11-29T18%3a30%3a11.1234567Z",
		"2026-11-29T18:30:11.1234567Z",
		"2026-11-29T18%3A30%3A11Z",
		"%32026-11-29T18%3A30%3A11Z",
		"2026-11-29T18%3A30%3A11.123456789Z",
		"2026-11-29T19%3A30%3A11.1234567%2B01%3A00",
		"2026-11-29T18%3A30%3A11.1234567Z%",
		"2026-11-29T18%3A30%3A11.1234567Z%3",
		"not a time",
		"",
	} {
		got, gotOK := etagTime(etagPrefix + inner + etagSuffix)
		var want time.Time
		text, err := url.PathUnescape(inner)
		if err == nil {
			want, err = service.ReadDateTime(text)
		}
		if gotOK != (err == nil) || !got.Equal(want) {
			t.Errorf("etagTime(%q) = %v, %v; want %v, %v", inner, got, gotOK, want, err == nil)
		}
	}
	etag := formatETag(t0)
	if n := testing.AllocsPerRun(100, func() { etagTime(etag) }); n != 0 {
		t.Errorf("reading the service's own ETag allocates %v times", n)
	}
}
