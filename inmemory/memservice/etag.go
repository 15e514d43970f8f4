package memservice

import (
	"net/url"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

const (
	etagPrefix = `W/"datetime'`
	etagSuffix = `'"`
	// etagLen is the length of the service's ETags: the date-time's two colons are escaped.
	etagLen = len(etagPrefix) + len("2026-11-29T18%3A30%3A11.1234567Z") + len(etagSuffix)
)

// formatETag returns the ETag the service gives a row written at t:
// W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'", the date-time's two colons escaped. Every
// write formats one, so the colons are escaped where service.FormatDateTime always puts
// them (a year of four digits); any other text is escaped wherever its colons are.
func formatETag(t time.Time) string {
	var buf [etagLen]byte
	b := append(buf[:0], etagPrefix...)
	text := service.FormatDateTime(t)
	if len(text) == len("2026-11-29T18:30:11.1234567Z") && text[13] == ':' && text[16] == ':' {
		b = append(b, text[:13]...)
		b = append(b, "%3A"...)
		b = append(b, text[14:16]...)
		b = append(b, "%3A"...)
		b = append(b, text[17:]...)
	} else {
		b = append(b, strings.ReplaceAll(text, ":", "%3A")...)
	}
	return string(append(b, etagSuffix...))
}

// A condition is the If-Match of a row write: any existing row, or the row written at a
// given time.
type condition struct {
	any   bool
	never bool // a weak ETag the service did not issue: no row carries it
	at    time.Time
}

// parseCondition reads an If-Match value. Empty and "*" match any existing row. An ETag of
// the service's shape (W/"datetime'…'" around a date-time that service.ReadDateTime reads)
// matches the row written at that time; the time inside is compared, not the text, so that
// differently escaped forms of one ETag match as they do on the service. Any other weak
// entity tag (W/"…") matches no row, as Azure answers it with 412 (Azurite issue 1229);
// anything else fails the write with 400 InvalidInput, Azure's answer to an If-Match that is
// not one of its ETags (Azurite issue 2013).
func parseCondition(etag string) (condition, error) {
	if etag == "" || etag == service.ETagAny {
		return condition{any: true}, nil
	}
	if t, ok := etagTime(etag); ok {
		return condition{at: t}, nil
	}
	if isWeakTag(etag) {
		return condition{never: true}, nil
	}
	return condition{}, errBadETag(etag)
}

// etagTime returns the time an ETag of the service's shape names.
func etagTime(etag string) (time.Time, bool) {
	inner, ok := strings.CutPrefix(etag, etagPrefix)
	if ok {
		inner, ok = strings.CutSuffix(inner, etagSuffix)
	}
	if !ok {
		return time.Time{}, false
	}
	// The service's own ETags escape only the colons; a Strict write sends one back on every
	// call, so it is read without copying it to the heap. Anything else takes the general
	// path, which reads the same times.
	var buf [len("2026-11-29T18:30:11.1234567Z")]byte
	if text, ok := unescapeColons(buf[:0], inner); ok {
		if t, err := service.ParseDateTime(string(text)); err == nil {
			return t, true
		}
	}
	text, err := url.PathUnescape(inner)
	if err != nil {
		return time.Time{}, false
	}
	t, err := service.ReadDateTime(text)
	return t, err == nil
}

// unescapeColons appends inner to buf with each %3A (or %3a) unescaped, and reports false
// when inner holds another escape or does not fit in buf's capacity.
func unescapeColons(buf []byte, inner string) ([]byte, bool) {
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c == '%' {
			if i+2 >= len(inner) || inner[i+1] != '3' || (inner[i+2] != 'A' && inner[i+2] != 'a') {
				return nil, false
			}
			c, i = ':', i+2
		}
		if len(buf) == cap(buf) {
			return nil, false
		}
		buf = append(buf, c)
	}
	return buf, true
}

// isWeakTag reports whether etag is a weak entity tag: W/ and a quoted string with no quote
// inside.
func isWeakTag(etag string) bool {
	inner, ok := strings.CutPrefix(etag, `W/"`)
	if !ok || len(inner) == 0 || inner[len(inner)-1] != '"' {
		return false
	}
	return !strings.Contains(inner[:len(inner)-1], `"`)
}

// matches reports whether the stored row r satisfies c.
func (c condition) matches(r *service.Row) bool {
	return !c.never && (c.any || c.at.Equal(r.Timestamp))
}
