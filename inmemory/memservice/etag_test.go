package memservice

import (
	"math/rand/v2"
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
