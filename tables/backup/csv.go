package backup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Typed CSV, as Azure Storage Explorer exports and imports tables: a header of
// PartitionKey, RowKey, (Timestamp,) then each property's column followed by a column named
// after it with "@type" holding the property's EDM type on each row ("Edm.String",
// "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.Boolean", "Edm.DateTime", "Edm.Guid",
// "Edm.Binary"); a row without the property has both cells empty, and an empty string is an
// empty value typed Edm.String. Values are written as the service writes them in JSON:
// integers in decimal, doubles in their shortest form (NaN, Infinity, -Infinity), times in
// UTC with seven fractional digits, GUIDs in lower case, binary in base64.

// ExportCSV writes the rows of table (of opts.Partitions only, when set) to w as typed
// CSV, or without the @type columns when opts.Untyped is set, in key order, properties in
// the order of their names, with a Timestamp column when opts.Timestamps is set. It holds
// the rows in memory until the header, which names every property, is written: it is meant
// for tables a spreadsheet opens.
//
// Large values do not fit a CSV cell: an entity that holds one (split over cells or
// continuation rows, or offloaded to a blob) fails the export with an error matching
// abstractions.ErrNotSupported that names it, and nothing is written; back such a table up
// with Write instead.
func ExportCSV(ctx context.Context, acct *tables.Account, table string, w io.Writer, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if acct == nil || acct.Tables() == nil || w == nil {
		return Stats{}, fmt.Errorf("%w: export needs an account with a table service and a writer", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(table); err != nil {
		return Stats{}, err
	}
	src := &source{tbl: acct.Tables(), table: table, r: newRetrier(opts.logger())}
	prog := newProgress(opts.Progress)
	var st Stats
	var rows []service.Row
	names := map[string]bool{}
	filters := []string{""}
	if len(opts.Partitions) > 0 {
		parts := append([]string{}, opts.Partitions...)
		sort.Slice(parts, func(i, j int) bool { return service.CompareUTF16(parts[i], parts[j]) < 0 })
		filters = filters[:0]
		for _, pk := range parts {
			filters = append(filters, odata.Partition(pk))
		}
	}
	var refused error
	for _, f := range filters {
		err := src.scan(ctx, segment{filter: f}, func(ent entity) bool {
			main := &ent.rows[0]
			if len(ent.rows) > 1 || len(ent.values) > 0 || len(blobRefsOf(main)) > 0 {
				refused = fmt.Errorf("%w: export to CSV: the entity (%q, %q) of table %s holds a large value (split over cells or rows, or in a blob), "+
					"which one CSV cell cannot hold; nothing was written: back the table up with `udtables backup` instead, which keeps them",
					abstractions.ErrNotSupported, main.PartitionKey, main.RowKey, table)
				return false
			}
			for _, p := range main.Properties {
				names[p.Name] = true
			}
			rows = append(rows, *main)
			st.Entities++
			st.Rows++
			prog.report(&st, false)
			return true
		})
		if refused != nil {
			return st, refused
		}
		if err != nil {
			return st, err
		}
	}
	// In key order, which Cosmos DB for Table does not list rows in.
	sort.Slice(rows, func(i, j int) bool {
		if c := service.CompareUTF16(rows[i].PartitionKey, rows[j].PartitionKey); c != 0 {
			return c < 0
		}
		return service.CompareUTF16(rows[i].RowKey, rows[j].RowKey) < 0
	})
	cols := make([]string, 0, len(names))
	for n := range names {
		cols = append(cols, n)
	}
	sort.Strings(cols)
	cw := &csvWriter{w: bufio.NewWriter(w)}
	header := []string{"PartitionKey", "RowKey"}
	if opts.Timestamps {
		header = append(header, "Timestamp")
	}
	for _, c := range cols {
		header = append(header, c)
		if !opts.Untyped {
			header = append(header, c+"@type")
		}
	}
	if err := cw.record(header); err != nil {
		return st, err
	}
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c] = i
	}
	per := 2
	if opts.Untyped {
		per = 1
	}
	for i := range rows {
		r := &rows[i]
		fields := make([]string, len(header))
		fields[0], fields[1] = r.PartitionKey, r.RowKey
		at := 2
		if opts.Timestamps {
			if !r.Timestamp.IsZero() {
				fields[2] = service.FormatDateTime(r.Timestamp)
			}
			at = 3
		}
		for _, p := range r.Properties {
			j := at + per*index[p.Name]
			fields[j] = formatCSV(p.Value)
			if !opts.Untyped {
				fields[j+1] = p.Value.Kind().String()
			}
		}
		if err := cw.record(fields); err != nil {
			return st, err
		}
	}
	err := cw.w.Flush()
	prog.report(&st, true)
	return st, err
}

// formatCSV is the text of a value in a CSV cell.
func formatCSV(v service.Value) string {
	switch v.Kind() {
	case service.KindString, service.KindGuid:
		return v.Str()
	case service.KindBinary:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	case service.KindBool:
		return strconv.FormatBool(v.Bool())
	case service.KindInt32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case service.KindInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case service.KindDouble:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case service.KindDateTime:
		return service.FormatDateTime(v.Time())
	}
	return ""
}

// ImportCSV writes the rows of the CSV file r into table (created when missing) and
// returns what it wrote. The file is typed CSV as ExportCSV and Storage Explorer write it
// (type names with or without their "Edm." prefix); a property column without an @type
// column beside it holds strings, or, with opts.Untyped, values whose type is inferred
// from their text (true or false, an integer as Edm.Int32 or else Edm.Int64, a number as
// Edm.Double, an ISO 8601 time with a zone as Edm.DateTime, a GUID as Edm.Guid, anything
// else as Edm.String; an empty cell is no property). A Timestamp column is ignored: the
// service sets its own.
//
// Nothing is written before the whole file is read and checked: its CSV syntax, its
// header, each value against its type, each key, property name and row size against the
// service's rules, no key twice, and no row holding the cells of a large value (a raw
// export of a table where one is split or in a blob); the first failure is an error matching
// abstractions.ErrInvalidArgument that names the line. The rows are then written as
// Restore writes an archive's entities: several rows of a partition per entity-group
// transaction, a table that holds rows refused unless opts.Existing says Skip or Replace,
// lost answers settled by reading the rows back.
func ImportCSV(ctx context.Context, acct *tables.Account, table string, r io.Reader, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if acct == nil || acct.Tables() == nil || r == nil {
		return Stats{}, fmt.Errorf("%w: import needs an account with a table service and a reader", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(table); err != nil {
		return Stats{}, err
	}
	rows, err := parseCSV(r, opts.Untyped)
	if err != nil {
		return Stats{}, err
	}
	// The rows become an archive, which Restore writes: one way to write entities.
	sort.SliceStable(rows, func(i, j int) bool {
		if c := service.CompareUTF16(rows[i].PartitionKey, rows[j].PartitionKey); c != 0 {
			return c < 0
		}
		return service.CompareUTF16(rows[i].RowKey, rows[j].RowKey) < 0
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	recs := []any{headerRec{Type: recHeader, Format: formatName, Version: Version, Table: table}}
	for i := range rows {
		recs = append(recs, entityRec{Type: recEntity, PK: rows[i].PartitionKey, Rows: []rowRec{rowToRec(&rows[i])}})
	}
	recs = append(recs, endRec{Type: recEnd, Entities: int64(len(rows)), Rows: int64(len(rows))})
	for _, rec := range recs {
		if err := enc.Encode(rec); err != nil {
			return Stats{}, err
		}
	}
	st, err := Restore(ctx, acct, table, &buf, opts)
	st.Bytes = 0 // of the archive made here, not of the file
	return st, err
}

// parseCSV reads and checks a whole CSV file as ImportCSV does, writing nothing, and
// returns its rows in the file's order.
func parseCSV(r io.Reader, untyped bool) ([]service.Row, error) {
	cr := newCSVReader(r)
	header, _, err := cr.next()
	if err == io.EOF {
		return nil, csvError(1, "the file is empty; its first line names the columns (PartitionKey,RowKey,…)")
	}
	if err != nil {
		return nil, csvError(0, "%v", err)
	}
	cols, err := csvColumns(header)
	if err != nil {
		return nil, err
	}
	var rows []service.Row
	seen := map[[2]string]int{}
	for {
		fields, line, err := cr.next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(0, "%v", err)
		}
		if len(fields) == 1 && fields[0] == "" {
			continue // an empty line
		}
		if len(fields) != len(header) {
			return nil, csvError(line, "%d fields, the header has %d; quote a field that holds a comma", len(fields), len(header))
		}
		row, err := cols.row(fields, untyped, line)
		if err != nil {
			return nil, err
		}
		k := [2]string{row.PartitionKey, row.RowKey}
		if first, ok := seen[k]; ok {
			return nil, csvError(line, "the keys (%q, %q) are those of line %d; a table holds one row per key", row.PartitionKey, row.RowKey, first)
		}
		seen[k] = line
		rows = append(rows, row)
	}
}

func csvError(line int, format string, args ...any) error {
	where := ""
	if line > 0 {
		where = fmt.Sprintf("line %d: ", line)
	}
	return fmt.Errorf("%w: CSV import: %s%s; nothing was written", abstractions.ErrInvalidArgument, where, fmt.Sprintf(format, args...))
}

// csvCols is what a header says: where the keys are, and each property's value column and
// type column (-1: none).
type csvCols struct {
	pk, rk int
	props  []csvProp
}

type csvProp struct {
	name       string
	value, typ int
}

// propertyName is the service's rule for a property name: a C# identifier of at most 255
// characters (letters, digits and underscores, not starting with a digit).
var propertyName = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_]{0,254}$`)

func csvColumns(header []string) (*csvCols, error) {
	c := &csvCols{pk: -1, rk: -1}
	at := map[string]int{}
	for i, h := range header {
		if _, dup := at[h]; dup {
			return nil, csvError(1, "the column %q appears twice", h)
		}
		at[h] = i
	}
	for i, h := range header {
		name, isType := strings.CutSuffix(h, "@type")
		switch {
		case h == "PartitionKey":
			c.pk = i
		case h == "RowKey":
			c.rk = i
		case name == "Timestamp", name == "ETag", name == "odata.etag":
			// Set by the service.
		case isType:
			if _, ok := at[name]; !ok {
				return nil, csvError(1, "the column %q types a property %q that has no column", h, name)
			}
		default:
			if !propertyName.MatchString(h) {
				return nil, csvError(1, "%q is not a property name the service accepts (letters, digits and underscores, not starting with a digit, at most 255)", h)
			}
			p := csvProp{name: h, value: i, typ: -1}
			if j, ok := at[h+"@type"]; ok {
				p.typ = j
			}
			c.props = append(c.props, p)
		}
	}
	if c.pk < 0 || c.rk < 0 {
		return nil, csvError(1, "the header needs a PartitionKey and a RowKey column")
	}
	if len(c.props) > service.MaxEntityProperties {
		return nil, csvError(1, "%d properties; a row holds at most %d", len(c.props), service.MaxEntityProperties)
	}
	return c, nil
}

// row reads one record.
func (c *csvCols) row(fields []string, untyped bool, line int) (service.Row, error) {
	row := service.Row{PartitionKey: fields[c.pk], RowKey: fields[c.rk]}
	for which, k := range map[string]string{"PartitionKey": row.PartitionKey, "RowKey": row.RowKey} {
		if why := engine.CheckKey(k); why != "" {
			return row, csvError(line, "the %s %q %s", which, k, why)
		}
	}
	for _, p := range c.props {
		text, typ := fields[p.value], ""
		if p.typ >= 0 {
			typ = fields[p.typ]
		}
		var v service.Value
		var err error
		switch {
		case typ != "":
			v, err = parseTyped(text, typ)
		case p.typ >= 0 && text != "":
			err = errors.New("the value has no type: give its type in the @type column, or leave both empty for no property")
		case text == "":
			continue // no property
		case untyped:
			v = inferValue(text)
		default:
			v = service.String(text)
		}
		if err != nil {
			return row, csvError(line, "%s: %v", p.name, err)
		}
		if size, over := service.CellTooLarge(v); over {
			return row, csvError(line, "%s: the value takes %d bytes, more than one cell holds; store it through the library, which splits large values", p.name, size)
		}
		row.Properties = append(row.Properties, service.Property{Name: p.name, Value: v})
	}
	if n := service.EntitySize(row.PartitionKey, row.RowKey, row.Properties); n > service.MaxEntityBytes {
		return row, csvError(line, "the row takes %d bytes; a row holds at most %d", n, service.MaxEntityBytes)
	}
	// The cells of a large value as the library stores them (a raw export of its table):
	// Restore would check them against archive records a CSV does not have, after writing
	// the rows before them, so they are refused here, before anything is written.
	if vals, err := splitValues([]service.Row{row}); err != nil || len(vals) > 0 || len(blobRefsOf(&row)) > 0 {
		return row, csvError(line, "the row (%q, %q) holds the cells of a large value (split over cells or continuation rows, or in a blob), "+
			"which a CSV file cannot carry: back the source table up with `udtables backup` and restore the archive instead", row.PartitionKey, row.RowKey)
	}
	return row, nil
}

// parseTyped reads the text of a value of the EDM type typ ("Edm.Int32" or "Int32").
func parseTyped(text, typ string) (service.Value, error) {
	name := typ
	if !strings.HasPrefix(name, "Edm.") {
		name = "Edm." + name
	}
	kind, ok := service.KindOf(name)
	if !ok {
		return service.Value{}, fmt.Errorf("%q is not an EDM type (Edm.String, Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary)", typ)
	}
	if text == "" && kind != service.KindString && kind != service.KindBinary {
		return service.Value{}, fmt.Errorf("an empty %s; leave the type empty too for no property", name)
	}
	switch kind {
	case service.KindString:
		return service.String(text), nil
	case service.KindBinary:
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return service.Value{}, fmt.Errorf("an Edm.Binary is base64: %v", err)
		}
		return service.Binary(b), nil
	case service.KindBool:
		switch strings.ToLower(text) {
		case "true":
			return service.Bool(true), nil
		case "false":
			return service.Bool(false), nil
		}
		return service.Value{}, fmt.Errorf("an Edm.Boolean is true or false, not %q", text)
	case service.KindInt32:
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return service.Value{}, fmt.Errorf("an Edm.Int32 is a whole number from -2147483648 to 2147483647, not %q", text)
		}
		return service.Int32(int32(n)), nil
	case service.KindInt64:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return service.Value{}, fmt.Errorf("an Edm.Int64 is a whole number of 64 bits, not %q", text)
		}
		return service.Int64(n), nil
	case service.KindDouble:
		switch text {
		case "NaN":
			return service.Double(math.NaN()), nil
		case "Infinity":
			return service.Double(math.Inf(1)), nil
		case "-Infinity":
			return service.Double(math.Inf(-1)), nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return service.Value{}, fmt.Errorf("an Edm.Double is a number (or NaN, Infinity, -Infinity), not %q", text)
		}
		return service.Double(f), nil
	case service.KindDateTime:
		t, err := service.ReadDateTime(text)
		if err != nil {
			return service.Value{}, fmt.Errorf("an Edm.DateTime is an ISO 8601 time with its zone, such as 2026-01-02T03:04:05.1234567Z, not %q", text)
		}
		return service.DateTime(t), nil
	case service.KindGuid:
		v, err := service.ParseGuid(text)
		if err != nil {
			return service.Value{}, fmt.Errorf("an Edm.Guid is 32 hexadecimal digits in groups 8-4-4-4-12, not %q", text)
		}
		return v, nil
	}
	return service.Value{}, fmt.Errorf("%s has no CSV form", name)
}

var guidText = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// inferValue is the value of an untyped cell, its type inferred from its text.
func inferValue(text string) service.Value {
	switch text {
	case "true", "false":
		return service.Bool(text == "true")
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return service.Int32(int32(n))
		}
		return service.Int64(n)
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && strings.ContainsAny(text, "0123456789") {
		return service.Double(f)
	}
	if t, err := service.ParseDateTime(text); err == nil {
		return service.DateTime(t)
	}
	if guidText.MatchString(text) {
		if v, err := service.ParseGuid(text); err == nil {
			return v
		}
	}
	return service.String(text)
}
