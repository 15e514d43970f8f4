package azservice

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// bufPool holds entity-body buffers. The SDK decodes a body into its own map before it
// returns, so a buffer can be reused once the call is over.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

// putBuf recycles a buffer, except the few a large transaction grew, which would pin
// megabytes.
func putBuf(b *[]byte) {
	if cap(*b) <= 256<<10 {
		bufPool.Put(b)
	}
}

// noContent asks the service not to echo an inserted entity back: the ETag header is all a
// write needs, and the SDK would otherwise decode and re-encode the echo.
var noContent = http.Header{"Prefer": []string{"return-no-content"}}

// CreateTable creates a table; an existing one fails with 409 TableAlreadyExists.
func (s *Service) CreateTable(ctx context.Context, table string) error {
	_, err := s.tables.CreateTable(ctx, table, nil)
	return mapError(ctx, "create table", err)
}

// DeleteTable deletes a table; a missing one fails with 404 ResourceNotFound.
func (s *Service) DeleteTable(ctx context.Context, table string) error {
	_, err := s.tables.DeleteTable(ctx, table, nil)
	return mapError(ctx, "delete table", err)
}

// Ping lists at most one table (Query Tables with $top=1): one cheap request that needs a
// credential the service accepts for the account, and changes nothing.
func (s *Service) Ping(ctx context.Context) error {
	top := int32(1)
	pager := s.tables.NewListTablesPager(&aztables.ListTablesOptions{Top: &top})
	_, err := pager.NextPage(ctx)
	return mapError(ctx, "ping", err)
}

// TableExists reports whether the table exists. It asks with a point query on the table
// itself (the empty keys, one row at most, keys only): the service resolves the name
// without regard to case, as it does for every other call, answers 404 TableNotFound when
// the table is missing, and the query needs only read permission, where Get Table ACL needs
// the account key and a filter on the Tables table compares names with case.
func (s *Service) TableExists(ctx context.Context, table string) (bool, error) {
	_, err := s.query(ctx, table, service.Query{
		Filter: "PartitionKey eq '' and RowKey eq ''",
		Select: []string{},
		Top:    1,
	})
	if err == nil {
		return true, nil
	}
	if abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound") {
		return false, nil
	}
	return false, err
}

// GetRow reads one row. With a nil sel it is a Get Entity call; with a selection it is a
// query on the row's keys (Get Entity has no $select), and an absent row fails with the
// same 404 ResourceNotFound Get Entity reports. An empty PartitionKey also goes through the
// query, because the SDK cannot put an empty key in a URL.
func (s *Service) GetRow(ctx context.Context, table, partitionKey, rowKey string, sel []string) (service.Row, error) {
	if sel != nil || partitionKey == "" {
		return s.getRowByQuery(ctx, table, partitionKey, rowKey, sel)
	}
	if s.rows != nil {
		return s.rows.getRow(ctx, table, partitionKey, rowKey)
	}
	var raw *http.Response
	t := &tap{}
	resp, err := s.tables.NewClient(table).GetEntity(policy.WithCaptureResponse(withTap(ctx, t), &raw), partitionKey, rowKey, nil)
	if err != nil {
		return service.Row{}, mapError(ctx, "get row", err)
	}
	body := resp.Value
	if t.taken {
		body = t.body
	} else if raw != nil {
		if b, err := runtime.Payload(raw); err == nil {
			body = b
		}
	}
	row, err := decodeEntityBody(body)
	if err != nil {
		return service.Row{}, fmt.Errorf("azservice: get row (%q, %q) of %s: %w", partitionKey, rowKey, table, err)
	}
	if row.ETag == "" {
		row.ETag = string(resp.ETag)
	}
	return row, nil
}

func (s *Service) getRowByQuery(ctx context.Context, table, partitionKey, rowKey string, sel []string) (service.Row, error) {
	q := service.Query{
		Filter: "PartitionKey eq " + service.QuoteString(partitionKey) + " and RowKey eq " + service.QuoteString(rowKey),
		Select: sel,
		Top:    1,
	}
	for {
		page, err := s.query(ctx, table, q)
		if err != nil {
			return service.Row{}, err
		}
		if len(page.Rows) > 0 {
			return page.Rows[0], nil
		}
		if page.Next == nil {
			return service.Row{}, notFound()
		}
		// The service may end a page early, even empty, with a continuation.
		q.Continuation = page.Next
	}
}

// Query returns one page of rows: Filter, Select (plus the keys and Timestamp, which the
// contract always returns), Top when positive, and the continuation go to one List
// Entities call. A page may be short or empty and still have a Next.
func (s *Service) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	return s.query(ctx, table, q)
}

func (s *Service) query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	opts := &aztables.ListEntitiesOptions{}
	if q.Filter != "" {
		opts.Filter = &q.Filter
	}
	if q.Select != nil {
		sel := selectList(q.Select)
		opts.Select = &sel
	}
	if q.Top > 0 {
		top := int32(min(q.Top, math.MaxInt32))
		opts.Top = &top
	}
	if c := q.Continuation; c != nil {
		if c.NextPartitionKey != "" {
			opts.NextPartitionKey = &c.NextPartitionKey
		}
		if c.NextRowKey != "" {
			opts.NextRowKey = &c.NextRowKey
		}
	}
	var raw *http.Response
	t := &tap{}
	resp, err := s.tables.NewClient(table).NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(withTap(ctx, t), &raw))
	if err != nil {
		return service.Page{}, mapError(ctx, "query", err)
	}
	var page service.Page
	if t.taken {
		if page.Rows, err = decodeEntityList(t.body, 0); err != nil {
			return service.Page{}, fmt.Errorf("azservice: query %s: %w", table, err)
		}
	} else if raw != nil {
		body, err := runtime.Payload(raw)
		if err == nil {
			page.Rows, err = decodeEntityList(body, len(resp.Entities))
		}
		if err != nil {
			return service.Page{}, fmt.Errorf("azservice: query %s: %w", table, err)
		}
	} else {
		// Not reached with the SDK's pipeline, which always captures; the SDK's re-encoded
		// entities lose the difference between 5.0 and 5 but are otherwise the same.
		page.Rows = make([]service.Row, len(resp.Entities))
		for i, e := range resp.Entities {
			if page.Rows[i], err = decodeEntityBody(e); err != nil {
				return service.Page{}, fmt.Errorf("azservice: query %s: %w", table, err)
			}
		}
	}
	npk, nrk := azconn.Deref(resp.NextPartitionKey), azconn.Deref(resp.NextRowKey)
	if npk != "" || nrk != "" {
		page.Next = &service.Continuation{NextPartitionKey: npk, NextRowKey: nrk}
	}
	return page, nil
}

// selectList is the $select of a projection: the custom names plus the system properties.
func selectList(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(',')
	}
	for _, sys := range [...]string{keyPartitionKey, keyRowKey, keyTimestamp} {
		found := false
		for _, n := range names {
			if n == sys {
				found = true
				break
			}
		}
		if !found {
			b.WriteString(sys)
			b.WriteByte(',')
		}
	}
	return strings.TrimSuffix(b.String(), ",")
}

// Write performs one row write: Insert is Add Entity, Replace and Merge are Update Entity
// under If-Match (the action's ETag, or * when empty), the upserts are Upsert Entity, and
// Delete is Delete Entity under If-Match. The returned Timestamp is the time inside the
// new ETag, which the service also stores as the row's Timestamp.
//
// Write refuses, without sending anything, an unknown Op, a Row with an invalid value or a
// custom property named PartitionKey, RowKey or Timestamp, and an empty PartitionKey for
// every operation but Insert (the SDK cannot address one).
func (s *Service) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if a.Op < service.OpInsert || a.Op > service.OpDelete {
		return service.Written{}, fmt.Errorf("azservice: write: unknown operation %v", a.Op)
	}
	if a.Op != service.OpInsert && a.Row.PartitionKey == "" {
		return service.Written{}, errEmptyPartitionKey
	}
	if s.rows != nil {
		return s.rows.write(ctx, table, a)
	}
	client := s.tables.NewClient(table)
	ifMatch := azcore.ETag(a.IfMatch)
	if ifMatch == "" {
		ifMatch = azcore.ETagAny
	}
	if a.Op == service.OpDelete {
		_, err := client.DeleteEntity(ctx, a.Row.PartitionKey, a.Row.RowKey, &aztables.DeleteEntityOptions{IfMatch: &ifMatch})
		return service.Written{}, mapError(ctx, "delete row", err)
	}

	bp := getBuf()
	defer putBuf(bp)
	body, err := appendEntity((*bp)[:0], a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties)
	*bp = body
	if err != nil {
		return service.Written{}, err
	}
	var etag azcore.ETag
	switch a.Op {
	case service.OpInsert:
		var resp aztables.AddEntityResponse
		resp, err = client.AddEntity(policy.WithHTTPHeader(ctx, noContent), body, nil)
		etag = resp.ETag
	case service.OpReplace, service.OpMerge:
		// UpdateEntity and UpsertEntity type-assert the body's PartitionKey and RowKey to
		// strings and panic otherwise; appendEntity always writes both as strings.
		mode := aztables.UpdateModeReplace
		if a.Op == service.OpMerge {
			mode = aztables.UpdateModeMerge
		}
		var resp aztables.UpdateEntityResponse
		resp, err = client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &ifMatch, UpdateMode: mode})
		etag = resp.ETag
	case service.OpUpsertReplace, service.OpUpsertMerge:
		mode := aztables.UpdateModeReplace
		if a.Op == service.OpUpsertMerge {
			mode = aztables.UpdateModeMerge
		}
		var resp aztables.UpsertEntityResponse
		resp, err = client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: mode})
		etag = resp.ETag
	}
	if err != nil {
		return service.Written{}, mapError(ctx, "write row", err)
	}
	w := service.Written{ETag: string(etag)}
	w.Timestamp, _ = etagTime(w.ETag)
	return w, nil
}
