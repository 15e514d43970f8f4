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
)

// formatETag returns the ETag the service gives a row written at t:
// W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'".
func formatETag(t time.Time) string {
	return etagPrefix + strings.ReplaceAll(service.FormatDateTime(t), ":", "%3A") + etagSuffix
}

// A condition is the If-Match of a row write: any existing row, or the row written at a
// given time.
type condition struct {
	any bool
	at  time.Time
}

// parseCondition reads an If-Match value. Empty and "*" match any existing row; anything
// else must have the shape of the service's ETags (W/"datetime'…'" around a date-time that
// service.ReadDateTime reads), or the write fails with 400 InvalidInput. The time inside is
// compared, not the text, so that differently escaped forms of one ETag match as they do on
// the service.
func parseCondition(etag string) (condition, error) {
	if etag == "" || etag == service.ETagAny {
		return condition{any: true}, nil
	}
	inner, ok := strings.CutPrefix(etag, etagPrefix)
	if ok {
		inner, ok = strings.CutSuffix(inner, etagSuffix)
	}
	if !ok {
		return condition{}, errBadETag(etag)
	}
	text, err := url.PathUnescape(inner)
	if err != nil {
		return condition{}, errBadETag(etag)
	}
	t, err := service.ReadDateTime(text)
	if err != nil {
		return condition{}, errBadETag(etag)
	}
	return condition{at: t}, nil
}

// matches reports whether the stored row r satisfies c.
func (c condition) matches(r *service.Row) bool {
	return c.any || c.at.Equal(r.Timestamp)
}
