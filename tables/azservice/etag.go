package azservice

import (
	"net/url"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// etagTime returns the time inside a table entity's ETag, such as
// W/"datetime'2021-04-06T21%3A03%3A31.9231271Z'". The service sets an entity's Timestamp to
// that same time, so a write learns its Timestamp without reading the entity back. It
// reports false for an ETag of another shape.
func etagTime(etag string) (time.Time, bool) {
	const open = "datetime'"
	i := strings.Index(etag, open)
	if i < 0 {
		return time.Time{}, false
	}
	rest := etag[i+len(open):]
	j := strings.IndexByte(rest, '\'')
	if j < 0 {
		return time.Time{}, false
	}
	text, err := url.PathUnescape(rest[:j])
	if err != nil {
		return time.Time{}, false
	}
	t, err := service.ReadDateTime(text)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
