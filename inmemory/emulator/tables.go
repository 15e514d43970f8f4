package emulator

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/inmemory/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// maxPage is the most tables or entities one page of a query holds, as on the service.
const maxPage = 1000

// reply answers with status and, unless it is nil, a JSON body of the given metadata level.
func (q *request) reply(status int, level metadata, body []byte) {
	hdr := q.w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("DataServiceVersion", "3.0;")
	if body != nil {
		hdr.Set("Content-Type", "application/json;odata="+level.String()+";streaming=true;charset=utf-8")
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	q.w.WriteHeader(status)
	if body != nil {
		_, _ = q.w.Write(body)
	}
}

func (m metadata) String() string {
	switch m {
	case noMetadata:
		return "nometadata"
	case fullMetadata:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// preference reads the Prefer header: whether the response should carry the content.
// Only an insert honours it; without one, an insert returns its entity.
func (q *request) noContent() bool {
	switch strings.TrimSpace(q.r.Header.Get("Prefer")) {
	case "return-no-content":
		q.w.Header().Set("Preference-Applied", "return-no-content")
		return true
	case "return-content":
		q.w.Header().Set("Preference-Applied", "return-content")
	}
	return false
}

// appendTable appends one table's JSON object.
func (q *request) appendTable(b []byte, level metadata, name string) []byte {
	b = append(b, '{')
	if level == fullMetadata {
		link := "Tables(" + quoteKey(name) + ")"
		b = append(b, `"odata.type":`...)
		b = appendString(b, q.acct.name+".Tables")
		b = append(b, `,"odata.id":`...)
		b = appendString(b, q.baseURL()+"/"+link)
		b = append(b, `,"odata.editLink":`...)
		b = appendString(b, link)
		b = append(b, ',')
	}
	b = append(b, `"TableName":`...)
	b = appendString(b, name)
	return append(b, '}')
}

// tableElement is a single table's body: its object, with odata.metadata unless there is
// no metadata.
func (q *request) tableElement(level metadata, name string) []byte {
	obj := q.appendTable(nil, level, name)
	if level == noMetadata {
		return obj
	}
	b := append([]byte(`{"odata.metadata":`), appendString(nil, q.baseURL()+"/$metadata#Tables/@Element")...)
	b = append(b, ',')
	return append(b, obj[1:]...)
}

func (q *request) createTable() {
	level, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	e, err := decodeEntity(q.body)
	if err != nil {
		q.fail(err)
		return
	}
	if !e.hasTableName {
		q.fail(statusError(http.StatusBadRequest, "PropertiesNeedValue", "The values are not specified for all properties in the entity."))
		return
	}
	if err := q.acct.svc.CreateTable(q.r.Context(), e.tableName); err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("Location", q.baseURL()+"/Tables("+quoteKey(e.tableName)+")")
	if q.noContent() {
		q.reply(http.StatusNoContent, level, nil)
		return
	}
	q.reply(http.StatusCreated, level, q.tableElement(level, e.tableName))
}

func (q *request) deleteTable(name string) {
	if err := q.acct.svc.DeleteTable(q.r.Context(), name); err != nil {
		q.fail(err)
		return
	}
	if err := q.acct.acls.drop(name); err != nil {
		q.fail(err) // the table is gone, its policies are not: a 500, as for a log that fails
		return
	}
	q.reply(http.StatusNoContent, 0, nil)
}

func (q *request) getTable(name string) {
	level, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	names, err := q.acct.svc.TableNames(q.r.Context())
	if err != nil {
		q.fail(err)
		return
	}
	for _, n := range names {
		if strings.EqualFold(n, name) {
			q.reply(http.StatusOK, level, q.tableElement(level, n))
			return
		}
	}
	q.fail(statusError(http.StatusNotFound, "ResourceNotFound", "The specified resource does not exist."))
}

// queryTables lists the tables in name order: those $filter (over the property TableName)
// selects, at most $top (1 to 1000) a page, from the NextTableName continuation on.
func (q *request) queryTables() {
	level, opts, top, err := q.pageOptions()
	if err != nil {
		q.fail(err)
		return
	}
	var f *odata.Filter
	if s := opts.Get("$filter"); s != "" {
		if f, err = odata.Parse(s); err != nil {
			q.fail(errInvalidInput(err.Error()))
			return
		}
	}
	from := ""
	if tok := opts.Get("NextTableName"); tok != "" {
		var ok bool
		if from, ok = decodeTableToken(tok); !ok {
			q.fail(errInvalidInput("One of the request inputs is not valid."))
			return
		}
	}
	names, err := q.acct.svc.TableNames(q.r.Context())
	if err != nil {
		q.fail(err)
		return
	}
	b := []byte("{")
	if level != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendString(b, q.baseURL()+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	n := 0
	for _, name := range names {
		if strings.ToLower(name) < from {
			continue
		}
		if f != nil && !f.Match(&service.Row{Properties: []service.Property{{Name: "TableName", Value: service.String(name)}}}) {
			continue
		}
		if n == top {
			q.w.Header().Set("x-ms-continuation-NextTableName", encodeTableToken(strings.ToLower(name)))
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = q.appendTable(b, level, name)
		n++
	}
	b = append(b, "]}"...)
	q.reply(http.StatusOK, level, b)
}

// pageOptions reads what a query of tables or entities shares: the metadata level, the
// query options, and $top (1 to 1000, or the service's maximum of 1000 when absent).
func (q *request) pageOptions() (metadata, url.Values, int, error) {
	level, err := q.metadataLevel()
	if err != nil {
		return 0, nil, 0, err
	}
	opts := q.r.URL.Query()
	v, ok := opts["$top"]
	if !ok {
		return level, opts, maxPage, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 1 || n > maxPage {
		return 0, nil, 0, errBadQueryValue("$top")
	}
	return level, opts, n, nil
}

// Continuations of Query Tables name the table to start from.
func encodeTableToken(key string) string {
	return "1!" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodeTableToken(tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	return string(b), err == nil
}
