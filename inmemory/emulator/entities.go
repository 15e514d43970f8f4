package emulator

import (
	"net/http"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// selectList reads $select: the names, trimmed, without empty items; nil when absent.
func (q *request) selectList() []string {
	v := q.r.URL.Query().Get("$select")
	var sel []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			sel = append(sel, s)
		}
	}
	return sel
}

func (q *request) entityWriter(level metadata, table string, sel []string) *entityWriter {
	return &entityWriter{level: level, base: q.baseURL(), table: table, sel: sel}
}

// entityLink is the URL path of a row, after the account.
func entityLink(table, pk, rk string) string {
	return table + "(PartitionKey=" + quoteKey(pk) + ",RowKey=" + quoteKey(rk) + ")"
}

// entityElement is the body of a single entity: its object with odata.metadata unless there
// is no metadata.
func (q *request) entityElement(ew *entityWriter, row *service.Row) []byte {
	if ew.level == noMetadata {
		return ew.appendRow(nil, row)
	}
	return ew.appendRow(nil, row, "odata.metadata", q.baseURL()+"/$metadata#"+ew.table+"/@Element")
}

// readEntityBody reads the entity of an insert or update: its keys must be strings, and, as
// the service requires, an insert must name both.
func (q *request) readEntityBody(needKeys bool) (entityBody, error) {
	e, err := decodeEntity(q.body)
	if err != nil {
		return e, err
	}
	if e.keysNotStrings {
		return e, errBadInput()
	}
	if needKeys && (!e.hasPK || !e.hasRK) {
		return e, statusError(http.StatusBadRequest, "PropertiesNeedValue", "The values are not specified for all properties in the entity.")
	}
	return e, nil
}

func (q *request) insertEntity(table string) {
	level, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	e, err := q.readEntityBody(true)
	if err != nil {
		q.fail(err)
		return
	}
	row := service.Row{PartitionKey: e.pk, RowKey: e.rk, Properties: e.props}
	a := service.Action{Op: service.OpInsert, Row: row}
	if err := q.sas.allows(table, a); err != nil {
		q.fail(err)
		return
	}
	w, err := q.acct.svc.Write(q.r.Context(), table, a)
	if err != nil {
		q.fail(err)
		return
	}
	row.ETag, row.Timestamp = w.ETag, w.Timestamp
	hdr := q.w.Header()
	hdr.Set("ETag", w.ETag)
	hdr.Set("Location", q.baseURL()+"/"+entityLink(table, e.pk, e.rk))
	if q.noContent() {
		hdr.Set("DataServiceId", q.baseURL()+"/"+entityLink(table, e.pk, e.rk))
		q.reply(http.StatusNoContent, level, nil)
		return
	}
	q.reply(http.StatusCreated, level, q.entityElement(q.entityWriter(level, table, nil), &row))
}

// writeOp maps a method and an If-Match header onto the service's operation: with If-Match,
// PUT replaces and MERGE (or PATCH) merges an existing row; without, they upsert. DELETE
// requires If-Match.
func writeOp(method, ifMatch string) (service.Op, error) {
	switch method {
	case http.MethodPut:
		if ifMatch == "" {
			return service.OpUpsertReplace, nil
		}
		return service.OpReplace, nil
	case http.MethodDelete:
		if ifMatch == "" {
			return 0, errMissingHeader("If-Match")
		}
		return service.OpDelete, nil
	}
	if ifMatch == "" {
		return service.OpUpsertMerge, nil
	}
	return service.OpMerge, nil
}

// entityAction reads the action an update, merge or delete of res asks for: the keys from
// the URL, the properties from the body (whose keys, when given, must be the URL's).
func entityAction(method, ifMatch string, res resource, body []byte) (service.Action, error) {
	op, err := writeOp(method, ifMatch)
	if err != nil {
		return service.Action{}, err
	}
	a := service.Action{Op: op, IfMatch: ifMatch, Row: service.Row{PartitionKey: res.pk, RowKey: res.rk}}
	if op == service.OpDelete {
		return a, nil
	}
	e, err := decodeEntity(body)
	if err != nil {
		return a, err
	}
	if e.keysNotStrings || (e.hasPK && e.pk != res.pk) || (e.hasRK && e.rk != res.rk) {
		return a, errBadInput()
	}
	a.Row.Properties = e.props
	return a, nil
}

func (q *request) writeEntity(method string, res resource) {
	a, err := entityAction(method, q.r.Header.Get("If-Match"), res, q.body)
	if err != nil {
		q.fail(err)
		return
	}
	w, err := q.acct.svc.Write(q.r.Context(), res.table, a)
	if err != nil {
		q.fail(err)
		return
	}
	if a.Op != service.OpDelete {
		q.w.Header().Set("ETag", w.ETag)
	}
	q.reply(http.StatusNoContent, 0, nil)
}

func (q *request) getEntity(res resource) {
	level, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	row, err := q.acct.svc.GetRow(q.r.Context(), res.table, res.pk, res.rk, nil)
	if err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("ETag", row.ETag)
	q.reply(http.StatusOK, level, q.entityElement(q.entityWriter(level, res.table, q.selectList()), &row))
}

// queryEntities answers one page of a query: $filter, $select, $top (1 to 1000) and the
// NextPartitionKey and NextRowKey continuation, which come back as headers.
func (q *request) queryEntities(table string) {
	level, opts, top, err := q.pageOptions()
	if err != nil {
		q.fail(err)
		return
	}
	query := service.Query{Filter: q.sas.rangeFilter(opts.Get("$filter")), Top: top}
	if opts.Has("NextPartitionKey") || opts.Has("NextRowKey") {
		query.Continuation = &service.Continuation{NextPartitionKey: opts.Get("NextPartitionKey"), NextRowKey: opts.Get("NextRowKey")}
	}
	page, err := q.acct.svc.Query(q.r.Context(), table, query)
	if err != nil {
		q.fail(err)
		return
	}
	ew := q.entityWriter(level, table, q.selectList())
	b := []byte("{")
	if level != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendString(b, q.baseURL()+"/$metadata#"+table)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i := range page.Rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = ew.appendRow(b, &page.Rows[i])
	}
	b = append(b, "]}"...)
	if page.Next != nil {
		q.w.Header().Set("x-ms-continuation-NextPartitionKey", page.Next.NextPartitionKey)
		q.w.Header().Set("x-ms-continuation-NextRowKey", page.Next.NextRowKey)
	}
	q.reply(http.StatusOK, level, b)
}
