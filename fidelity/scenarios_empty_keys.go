package fidelity

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// emptyKeyScenarios are the store scenarios of rows with an empty partition or row key,
// which Azure stores and other programs (a .NET service, the raw SDK) write: a store reads
// them by id, and writes none.
var emptyKeyScenarios = []Scenario{{
	Name: "store/empty-keys",
	Run: func(ctx context.Context, e *Env) {
		// Rows as a .NET service writes them: the id in the Id column, "|" between the keys.
		for _, k := range [][2]string{{"", "x"}, {"x", ""}, {"", ""}} {
			id := k[0] + "|" + k[1]
			_, err := e.Tables.Write(ctx, e.Table, insert(row(k[0], k[1], "Id", service.String(id), "Name", service.String("written by .NET as "+id))))
			e.OK("insert "+id, err)
		}
		s := storeOf[customerRow](e, nil)
		for _, id := range []string{"|x", "x|", "|"} {
			got, err := s.One(ctx, id)
			e.OK("one "+id, err)
			e.Observe("one "+id, customer(got))
			ok, err := s.Exists(ctx, id)
			e.OK("exists "+id, err)
			e.Equal("exists "+id, ok, true)
		}
		// Ids are normalised before they are split, as for every other id.
		got, err := s.One(ctx, "  |X ")
		e.OK("one of a normalised id", err)
		e.Equal("one of a normalised id", got.ID, "|x")
		_, err = s.One(ctx, "|missing")
		e.Is("one missing", err, abstractions.ErrNotFound)
		ok, err := s.Exists(ctx, "|missing")
		e.OK("exists missing", err)
		e.Equal("exists missing", ok, false)
		all, err := s.Query(ctx, abstractions.Query[customerRow]{})
		e.OK("the whole table", err)
		e.Equal("the whole table", ids(all), []string{"|", "|x", "x|"})

		// No write takes an empty key: the rows stay as they are (the dump shows it).
		e.Is("create", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "|y"}}), abstractions.ErrInvalidKey)
		e.Is("upsert", s.Upsert(ctx, &customerRow{Entity: abstractions.Entity{ID: "|x"}, Name: "changed"}), abstractions.ErrInvalidKey)
		e.Is("update", s.Update(ctx, &customerRow{Entity: abstractions.Entity{ID: "x|"}, Name: "changed"}, abstractions.LastWriterWins),
			abstractions.ErrInvalidKey)
		_, err = s.Patch(ctx, "|", abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Name }), "changed"))
		e.Is("patch", err, abstractions.ErrInvalidKey)
		_, err = s.Delete(ctx, "|x", "")
		e.Is("delete", err, abstractions.ErrInvalidKey)

		// The move SplitID's doc describes: read the row, write it under keys of its own.
		old, err := s.One(ctx, "|x")
		e.OK("read to move", err)
		moved := *old
		moved.ID, moved.ETag = "moved|x", ""
		e.OK("write it under keys of its own", s.Create(ctx, &moved))
		got, err = s.One(ctx, "moved|x")
		e.OK("read the moved row", err)
		e.Observe("the moved row", customer(got))
	},
}, {
	// A .NET service stores an offloaded value of a row with an empty key in a blob whose
	// name has the segment "%" for that key; a read of the row follows the reference. (The
	// empty key is the row key here: the Azure backend cannot delete a row whose partition
	// key is empty, and the scenario clears its table.)
	Name: "offload/empty-key-row",
	Run: func(ctx context.Context, e *Env) {
		s, c := offStore(e, noGrace)
		data := pattern(200_000, 7)
		e.OK("create", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|a"}, Title: "offloaded", Data: data}))
		src, err := e.Tables.GetRow(ctx, e.Table, "p", "a", nil)
		e.OK("read the row", err)
		cell, _ := src.Get("Data" + blobSuffix)
		ref, ok := parseBlobRef(cell)
		if !ok {
			e.Fatalf("the row holds no blob reference: %v", src)
		}
		blob, err := e.Blobs.Download(ctx, c, ref.Path, service.Conditions{})
		e.OK("download the blob", err)
		content, err := io.ReadAll(blob.Body)
		blob.Body.Close()
		e.OK("read the blob", err)

		// The same row and blob as .NET names them for the keys ("q", "").
		name := tableBlobPrefix(e.Table) + "q/%/Data/" + ref.SHA256 // the layout names an empty key "%"
		e.Equal("the empty key's segment", strings.Split(name, "/")[2], "%")
		_, err = e.Blobs.Upload(ctx, c, name, content, service.UploadOptions{ContentType: blob.Properties.ContentType,
			ContentEncoding: blob.Properties.ContentEncoding})
		e.OK("upload under the .NET name", err)
		moved := blobRef{Path: name, SHA256: ref.SHA256, Length: ref.Length, ContentType: ref.ContentType, Encoding: ref.Encoding}
		r := service.Row{PartitionKey: "q", RowKey: ""}
		for _, p := range src.Properties {
			switch p.Name {
			case "Id":
				p.Value = service.String("q|")
			case "Data" + blobSuffix:
				p.Value = moved.value()
			}
			r.Properties = append(r.Properties, p)
		}
		_, err = e.Tables.Write(ctx, e.Table, insert(r))
		e.OK("insert the .NET row", err)

		got, err := s.One(ctx, "q|")
		e.OK("read the row with an empty key", err)
		e.Equal("its value comes from the blob", got != nil && bytes.Equal(got.Data, data) && got.Title == "offloaded", true)
		e.observeOffRows(ctx, "rows")
		e.clearTable(ctx)
	},
}}
