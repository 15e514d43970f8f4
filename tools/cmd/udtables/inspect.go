package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/service"
)

func inspectCommand() *command {
	return &command{
		name:    "inspect",
		args:    "--table T [--azurite] [flags]",
		summary: "print a table's or a partition's raw rows: keys, ETag, columns, EDM types, sizes",
		about: `Inspect prints the rows of a table, or of one partition of it, as the library's codec
sees them on the wire: for each row its PartitionKey and RowKey, its ETag and Timestamp, and
every column with its EDM type, the size the service counts for it (strings in UTF-16 bytes)
and its value. Rows come in key order; --top caps how many are printed.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `.
Inspect only reads.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			account := accountFlags(fs)
			table := fs.String("table", "", "the table to read (required)")
			partition := fs.String("partition", "", "read only this partition")
			top := fs.Int("top", 20, "print at most this many rows")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				if err := needTable(*table); err != nil {
					return err
				}
				if *top < 1 {
					return &usageError{"--top must be at least 1"}
				}
				cs, err := needAccount(account)
				if err != nil {
					return err
				}
				// A transport of the command's own, closed at the end, so that no connection
				// outlives it (the tests check for leftover goroutines).
				tr := http.DefaultTransport.(*http.Transport).Clone()
				defer tr.CloseIdleConnections()
				svc, err := azservice.NewFromConnectionString(cs, &azservice.Options{
					ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}},
				})
				if err != nil {
					return fmt.Errorf("connection string: %w", err)
				}
				return inspect(ctx, svc, *table, *partition, *top, stdout)
			}
		},
	}
}

// inspect prints up to top rows of table (of one partition when partition is not empty).
func inspect(ctx context.Context, svc service.Tables, table, partition string, top int, out io.Writer) error {
	q := service.Query{}
	where := "table " + table
	if partition != "" {
		q.Filter = "PartitionKey eq " + service.QuoteString(partition)
		where += ", partition " + strconv.Quote(partition)
	}
	n := 0
	for first := true; n < top; first = false {
		q.Top = min(top-n, 1000)
		page, err := queryPage(ctx, svc, table, q, first)
		if err != nil {
			if abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound") {
				return fmt.Errorf("table %s does not exist", table)
			}
			return err
		}
		for i := range page.Rows {
			if n == top {
				break
			}
			n++
			printRow(out, n, &page.Rows[i])
		}
		if page.Next == nil {
			break
		}
		q.Continuation = page.Next
	}
	switch {
	case n == 0:
		fmt.Fprintf(out, "%s: no rows\n", where)
	case n == top:
		fmt.Fprintf(out, "%s: the first %d rows (--top)\n", where, n)
	default:
		fmt.Fprintf(out, "%s: %d rows\n", where, n)
	}
	return nil
}

// queryPage runs q. The first request is bounded by connectTimeout, so that an
// unreachable endpoint ends the command instead of hanging it through the SDK's retries.
func queryPage(ctx context.Context, svc service.Tables, table string, q service.Query, first bool) (service.Page, error) {
	if !first {
		return svc.Query(ctx, table, q)
	}
	qctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	page, err := svc.Query(qctx, table, q)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return page, fmt.Errorf("the table service did not answer within %v", connectTimeout)
	}
	return page, err
}

// printRow prints one row: keys, version, then its columns by name.
func printRow(out io.Writer, n int, r *service.Row) {
	fmt.Fprintf(out, "row %d: PartitionKey %q, RowKey %q\n", n, r.PartitionKey, r.RowKey)
	fmt.Fprintf(out, "  ETag       %s\n", r.ETag)
	fmt.Fprintf(out, "  Timestamp  %s\n", service.FormatDateTime(r.Timestamp))
	props := slices.Clone(r.Properties)
	slices.SortFunc(props, func(a, b service.Property) int { return strings.Compare(a.Name, b.Name) })
	nameW, total := len("column"), 0
	for _, p := range props {
		nameW = max(nameW, len(p.Name))
		total += p.Value.Size()
	}
	fmt.Fprintf(out, "  %-*s  %-12s  %8s  %s\n", nameW, "column", "type", "size (B)", "value")
	for _, p := range props {
		fmt.Fprintf(out, "  %-*s  %-12s  %8d  %s\n", nameW, p.Name, p.Value.Kind(), p.Value.Size(), formatValue(p.Value))
	}
	fmt.Fprintf(out, "  %d columns, %d bytes of values\n\n", len(props), total)
}

// maxShown is how much of a long string or binary value inspect prints.
const maxShown = 64

// formatValue renders a cell's value without its type, shortening long ones.
func formatValue(v service.Value) string {
	switch v.Kind() {
	case service.KindString:
		s := v.Str()
		if r := []rune(s); len(r) > maxShown {
			return strconv.Quote(string(r[:maxShown])) + fmt.Sprintf("… (%d characters)", len(r))
		}
		return strconv.Quote(s)
	case service.KindBinary:
		b := v.Bytes()
		if len(b) > maxShown/2 {
			return fmt.Sprintf("%x… (%d bytes)", b[:maxShown/2], len(b))
		}
		return fmt.Sprintf("%x", b)
	case service.KindBool:
		return strconv.FormatBool(v.Bool())
	case service.KindInt32, service.KindInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case service.KindDouble:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case service.KindDateTime:
		return service.FormatDateTime(v.Time())
	case service.KindGuid:
		return v.Str()
	}
	return v.String()
}
