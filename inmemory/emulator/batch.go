package emulator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// A batchPart is one request of a change set, read into the service's action.
type batchPart struct {
	action    service.Action
	contentID string // the part's Content-ID, echoed in its response
	prefer    string // the part's Prefer header
	level     metadata
	table     string
	insertOK  bool // an insert: the response names the row and may carry it
}

// batch performs an entity-group transaction: a multipart/mixed body holding one change set
// (itself multipart/mixed) of insert, update, merge, upsert and delete requests on one
// table. The answer is 202 Accepted with a multipart body of the same shape: a response for
// each action, or, when one fails, that action's response alone, its message prefixed with
// the action's index.
func (q *request) batch() {
	parts, failAt, err := q.readBatch()
	if err != nil {
		if failAt < 0 {
			q.fail(err)
			return
		}
		q.batchFailure(failAt, err)
		return
	}
	actions := make([]service.Action, len(parts))
	for i := range parts {
		if err := q.sas.allows(parts[i].table, parts[i].action); err != nil {
			q.batchFailure(i, err)
			return
		}
		actions[i] = parts[i].action
	}
	table := ""
	if len(parts) > 0 {
		table = parts[0].table
	}
	written, err := q.acct.svc.Transact(q.r.Context(), table, actions)
	var te *service.TransactionError
	switch {
	case errors.As(err, &te):
		q.batchFailure(te.Index, te.Err)
		return
	case err != nil:
		q.fail(err)
		return
	}
	var body bytes.Buffer
	for i := range parts {
		p := &parts[i]
		hdr := http.Header{}
		status := http.StatusNoContent
		var content []byte
		if p.prefer != "" {
			hdr.Set("Preference-Applied", p.prefer)
		}
		if p.contentID != "" {
			hdr.Set("Content-ID", p.contentID)
		}
		if p.action.Op != service.OpDelete {
			hdr.Set("ETag", written[i].ETag)
		}
		if p.insertOK {
			link := q.baseURL() + "/" + entityLink(p.table, p.action.Row.PartitionKey, p.action.Row.RowKey)
			hdr.Set("Location", link)
			if p.prefer == "return-no-content" {
				hdr.Set("DataServiceId", link)
			} else {
				status = http.StatusCreated
				row := p.action.Row
				row.ETag, row.Timestamp = written[i].ETag, written[i].Timestamp
				content = q.entityElement(q.entityWriter(p.level, p.table, nil), &row)
				hdr.Set("Content-Type", "application/json;odata="+p.level.String()+";streaming=true;charset=utf-8")
			}
		}
		writePart(&body, q.id, status, hdr, content)
	}
	q.batchReply(body.Bytes())
}

// readBatch reads the change set's requests. A failure that concerns one request comes with
// its index; one that concerns the whole body has index -1.
func (q *request) readBatch() ([]batchPart, int, error) {
	outer, err := boundaryOf(q.r.Header.Get("Content-Type"))
	if err != nil {
		return nil, -1, err
	}
	mr := multipart.NewReader(bytes.NewReader(q.body), outer)
	first, err := mr.NextPart()
	if err != nil {
		return nil, -1, errBadInput()
	}
	inner, err := boundaryOf(first.Header.Get("Content-Type"))
	if err != nil {
		// A part that is not a change set is a read, which the emulator does not do in a
		// batch.
		return nil, -1, errNotImplemented("a batch request outside a change set")
	}
	changeset, err := io.ReadAll(first)
	if err != nil {
		return nil, -1, errBadInput()
	}
	if _, err := mr.NextPart(); err != io.EOF {
		return nil, -1, errNotImplemented("more than one change set in a batch")
	}
	cr := multipart.NewReader(bytes.NewReader(changeset), inner)
	var parts []batchPart
	for i := 0; ; i++ {
		part, err := cr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, i, errBadInput()
		}
		raw, err := io.ReadAll(part)
		if err != nil {
			return nil, i, errBadInput()
		}
		p, err := q.readBatchPart(raw)
		if p.contentID == "" {
			p.contentID = part.Header.Get("Content-ID")
		}
		if err != nil {
			return nil, i, err
		}
		if len(parts) > 0 && !strings.EqualFold(p.table, parts[0].table) {
			return nil, i, errInvalidInput("All operations in a batch must address one table.")
		}
		parts = append(parts, p)
	}
	return parts, 0, nil
}

// boundaryOf returns the boundary of a multipart/mixed content type.
func boundaryOf(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return "", errInvalidInput("The batch request body is not multipart/mixed with a boundary.")
	}
	return params["boundary"], nil
}

// readBatchPart reads one request of a change set: a request line with an absolute URL,
// headers, an empty line and the entity.
func (q *request) readBatchPart(raw []byte) (batchPart, error) {
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		head, body, ok = bytes.Cut(raw, []byte("\n\n"))
	}
	if !ok {
		head = raw
	}
	req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(bytes.NewReader(head), strings.NewReader("\r\n\r\n"))))
	if err != nil {
		return batchPart{}, errBadInput()
	}
	acct, rest := splitAccount(req.URL.EscapedPath())
	if acct != q.acct.name {
		return batchPart{}, errInvalidURI()
	}
	res, err := parseResource(rest)
	if err != nil {
		return batchPart{}, err
	}
	for name := range req.URL.Query() {
		if strings.HasPrefix(name, "$") && name != "$format" {
			return batchPart{}, errNotImplemented("the query option " + name + " in a batch")
		}
	}
	sub := &request{exchange: exchange{r: req, w: q.w, h: q.h}, acct: q.acct}
	level, err := sub.metadataLevel()
	if err != nil {
		return batchPart{}, err
	}
	p := batchPart{prefer: strings.TrimSpace(req.Header.Get("Prefer")), contentID: req.Header.Get("Content-ID"), level: level, table: res.table}
	body = bytes.TrimSpace(body)
	switch {
	case req.Method == http.MethodPost && res.kind == resEntities:
		e, err := decodeEntity(body)
		if err != nil {
			return p, err
		}
		if e.keysNotStrings {
			return p, errBadInput()
		}
		if !e.hasPK || !e.hasRK {
			return p, statusError(http.StatusBadRequest, "PropertiesNeedValue", "The values are not specified for all properties in the entity.")
		}
		p.action = service.Action{Op: service.OpInsert, Row: service.Row{PartitionKey: e.pk, RowKey: e.rk, Properties: e.props}}
		p.insertOK = true
		if p.prefer != "return-no-content" && p.prefer != "return-content" {
			p.prefer = ""
		}
	case res.kind == resEntity && (req.Method == http.MethodPut || req.Method == "MERGE" || req.Method == http.MethodPatch || req.Method == http.MethodDelete):
		p.action, err = entityAction(req.Method, req.Header.Get("If-Match"), res, body)
		if err != nil {
			return p, err
		}
		p.prefer = ""
	case req.Method == http.MethodGet:
		return p, errNotImplemented("a read inside a change set")
	default:
		return p, errNotImplemented(req.Method + " on this resource in a batch")
	}
	return p, nil
}

// batchFailure answers a transaction whose action i failed with err: 202 Accepted, and in
// the change set that action's response alone.
func (q *request) batchFailure(i int, err error) {
	se := asStatus(err)
	body := q.errorBody(se, strconv.Itoa(i)+":")
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	var b bytes.Buffer
	writePart(&b, q.id, se.StatusCode, hdr, body)
	q.batchReply(b.Bytes())
}

// writePart writes one response of the change set whose boundary is
// "changesetresponse_"+id: its delimiter, its MIME headers, the
// HTTP response line, headers and content.
func writePart(b *bytes.Buffer, id string, status int, hdr http.Header, content []byte) {
	b.WriteString("--changesetresponse_" + id + "\r\n")
	b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	fmt.Fprintf(b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("DataServiceVersion", "3.0;")
	if content != nil {
		hdr.Set("Content-Length", strconv.Itoa(len(content)))
	}
	_ = hdr.Write(b)
	b.WriteString("\r\n")
	b.Write(content)
	b.WriteString("\r\n")
}

// batchReply answers 202 Accepted with the change set's responses in the batch envelope.
// The change set's boundary is "changesetresponse_" and the request id, the batch's
// "batchresponse_" and the same id, as the service makes them unique per response.
func (q *request) batchReply(parts []byte) {
	batchBoundary, changesetBoundary := "batchresponse_"+q.id, "changesetresponse_"+q.id
	var b bytes.Buffer
	b.WriteString("--" + batchBoundary + "\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=" + changesetBoundary + "\r\n\r\n")
	b.Write(parts)
	b.WriteString("--" + changesetBoundary + "--\r\n")
	b.WriteString("--" + batchBoundary + "--\r\n")
	hdr := q.w.Header()
	hdr.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("DataServiceVersion", "1.0;")
	hdr.Set("Content-Length", strconv.Itoa(b.Len()))
	q.w.WriteHeader(http.StatusAccepted)
	_, _ = q.w.Write(b.Bytes())
}
