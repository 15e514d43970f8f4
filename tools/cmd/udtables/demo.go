package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/service"
)

// connectionEnv names the environment variable the demo reads a connection string from
// when --connection-string is not given.
const connectionEnv = "UNIFIED_TABLES_CONNECTION_STRING"

// demoTimeout bounds a whole run against a real service, so that an unreachable endpoint
// ends the demo instead of hanging it through the SDK's retries.
const demoTimeout = 2 * time.Minute

func demoCommand() *command {
	return &command{
		name:    "demo",
		args:    "[--connection-string S]",
		summary: "walk through rows, ETags, transactions, queries and blobs",
		about: `Demo runs a short walkthrough and prints each step: it creates a table, inserts a row,
reads it back, replaces it with its ETag, shows that a second replace with the now stale
ETag fails with 412 UpdateConditionNotSatisfied, runs a transaction of three actions,
queries the partition, and uploads and downloads a blob.

Without a connection string it runs on the in-memory service, with no network. With one
(the flag, or the ` + connectionEnv + ` environment variable) it runs on that
account, Azurite or Azure, in a table and a blob container of its own with random names,
and deletes both at the end.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			conn := fs.String("connection-string", "", "a storage account connection string (default $"+connectionEnv+", else in memory)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				cs := *conn
				if cs == "" {
					cs = os.Getenv(connectionEnv)
				}
				if cs == "" {
					return demoInMemory(ctx, stdout)
				}
				return demoOnAccount(ctx, stdout, cs, nil)
			}
		},
	}
}

// demoInMemory runs the walkthrough on a fresh in-memory service.
func demoInMemory(ctx context.Context, out io.Writer) error {
	svc := memservice.New()
	fmt.Fprintln(out, "Backend: the in-memory service (no network)")
	d := &demo{out: out, tables: svc, blobs: svc, table: "Demo", container: "demo"}
	return d.run(ctx)
}

// demoOnAccount runs the walkthrough on the storage account of conn, in a table and a
// container named for this run, and deletes what it created afterwards, whether the
// walkthrough succeeded or not. opts may be nil.
func demoOnAccount(ctx context.Context, out io.Writer, conn string, opts *azservice.Options) error {
	svc, err := azservice.NewFromConnectionStringWithOptions(conn, opts)
	if err != nil {
		return fmt.Errorf("connection string: %w", err)
	}
	suffix, err := randomSuffix()
	if err != nil {
		return err
	}
	d := &demo{out: out, tables: svc, blobs: svc, table: "udtdemo" + suffix, container: "udtdemo-" + suffix}
	fmt.Fprintf(out, "Backend: the storage account of the connection string (table %s, container %s)\n", d.table, d.container)

	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	err = d.run(ctx)
	// Clean up after a failure or an interrupt too, on a context of its own.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer ccancel()
	cerr := d.cleanup(cctx)
	switch {
	case err != nil && cerr != nil:
		return fmt.Errorf("%w; the clean-up failed too: %v", err, cerr)
	case err != nil:
		return err
	default:
		return cerr
	}
}

// randomSuffix returns 8 lower-case hex digits, valid in both table and container names.
func randomSuffix() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// A demo is one run of the walkthrough: where it runs, where it prints, and what it has
// created so far.
type demo struct {
	out       io.Writer
	tables    service.Tables
	blobs     service.Blobs
	table     string
	container string

	step          int
	madeTable     bool
	madeContainer bool
}

// say prints the next step's heading.
func (d *demo) say(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.out, "%d. %s\n", d.step, fmt.Sprintf(format, args...))
}

// detail prints what the current step observed.
func (d *demo) detail(format string, args ...any) {
	fmt.Fprintf(d.out, "   %s\n", fmt.Sprintf(format, args...))
}

// fail names the current step in err.
func (d *demo) fail(err error) error {
	return fmt.Errorf("step %d: %w", d.step, err)
}

// cleanup deletes the table and the container, if the run created them.
func (d *demo) cleanup(ctx context.Context) error {
	var errs []string
	if d.madeTable {
		if err := d.tables.DeleteTable(ctx, d.table); err != nil {
			errs = append(errs, fmt.Sprintf("deleting table %s: %v", d.table, err))
		} else {
			fmt.Fprintf(d.out, "Cleaned up: deleted table %s\n", d.table)
		}
	}
	if d.madeContainer {
		if err := d.blobs.DeleteContainer(ctx, d.container); err != nil {
			errs = append(errs, fmt.Sprintf("deleting container %s: %v", d.container, err))
		} else {
			fmt.Fprintf(d.out, "Cleaned up: deleted container %s\n", d.container)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// run performs the walkthrough's steps, printing each. It stops at the first step that
// does not behave as the service documents.
func (d *demo) run(ctx context.Context) error {
	const pk = "demo"

	d.say("Create table %s", d.table)
	if err := d.tables.CreateTable(ctx, d.table); err != nil {
		return d.fail(err)
	}
	d.madeTable = true
	d.detail("created")

	ada := service.Row{PartitionKey: pk, RowKey: "ada", Properties: []service.Property{
		{Name: "Name", Value: service.String("Ada Lovelace")},
		{Name: "Visits", Value: service.Int32(1)},
	}}
	d.say("Insert row %s", formatRow(ada))
	w, err := d.tables.Write(ctx, d.table, service.Action{Op: service.OpInsert, Row: ada})
	if err != nil {
		return d.fail(err)
	}
	d.detail("ETag %s", w.ETag)

	d.say("Read row (%s, %s) back", pk, "ada")
	got, err := d.tables.GetRow(ctx, d.table, pk, "ada", nil)
	if err != nil {
		return d.fail(err)
	}
	d.detail("%s", formatRow(got))
	d.detail("ETag %s", got.ETag)
	staleETag := got.ETag

	got.Properties = []service.Property{
		{Name: "Name", Value: service.String("Ada Lovelace")},
		{Name: "Visits", Value: service.Int32(2)},
	}
	d.say("Replace it with Visits=2, If-Match its ETag")
	w, err = d.tables.Write(ctx, d.table, service.Action{Op: service.OpReplace, Row: got, IfMatch: staleETag})
	if err != nil {
		return d.fail(err)
	}
	d.detail("replaced; new ETag %s", w.ETag)

	d.say("Replace it again with the ETag read in step 3: the row has changed since, so this must fail")
	_, err = d.tables.Write(ctx, d.table, service.Action{Op: service.OpReplace, Row: got, IfMatch: staleETag})
	var se *abstractions.StatusError
	switch {
	case err == nil:
		return d.fail(errors.New("the replace with a stale ETag succeeded; the service must refuse it with 412"))
	case !errors.As(err, &se):
		return d.fail(err)
	}
	d.detail("refused: %d %s (%s)", se.StatusCode, se.ErrorCode, describe(se))
	if se.StatusCode != 412 || se.ErrorCode != "UpdateConditionNotSatisfied" {
		return d.fail(fmt.Errorf("want 412 UpdateConditionNotSatisfied: %w", err))
	}

	grace := service.Row{PartitionKey: pk, RowKey: "grace", Properties: []service.Property{
		{Name: "Name", Value: service.String("Grace Hopper")},
		{Name: "Visits", Value: service.Int32(1)},
	}}
	linus := service.Row{PartitionKey: pk, RowKey: "linus", Properties: []service.Property{
		{Name: "Name", Value: service.String("Linus Torvalds")},
		{Name: "Visits", Value: service.Int32(3)},
	}}
	merge := service.Row{PartitionKey: pk, RowKey: "ada", Properties: []service.Property{
		{Name: "Language", Value: service.String("Analytical Engine")},
	}}
	d.say("Run a transaction of 3 actions in partition %s: insert grace, insert linus, merge Language into ada", pk)
	err = d.tables.Transact(ctx, d.table, []service.Action{
		{Op: service.OpInsert, Row: grace},
		{Op: service.OpInsert, Row: linus},
		{Op: service.OpMerge, Row: merge, IfMatch: service.ETagAny},
	})
	if err != nil {
		return d.fail(err)
	}
	d.detail("committed, all three or none")

	d.say("Query partition %s", pk)
	q := service.Query{Filter: "PartitionKey eq '" + pk + "'"}
	n := 0
	for {
		page, err := d.tables.Query(ctx, d.table, q)
		if err != nil {
			return d.fail(err)
		}
		for _, r := range page.Rows {
			d.detail("%s", formatRow(r))
			n++
		}
		if page.Next == nil {
			break
		}
		q.Continuation = page.Next
	}
	d.detail("%d rows", n)
	if n != 3 {
		return d.fail(fmt.Errorf("the query returned %d rows, want 3", n))
	}

	const blobName = "greeting.txt"
	content := []byte("Hello from Unified Data Tables for Go!")
	d.say("Create container %s and upload blob %s (%d bytes)", d.container, blobName, len(content))
	if err := d.blobs.CreateContainer(ctx, d.container); err != nil {
		return d.fail(err)
	}
	d.madeContainer = true
	props, err := d.blobs.Upload(ctx, d.container, blobName, content, service.UploadOptions{
		Mode:        service.UploadCreate,
		ContentType: "text/plain; charset=utf-8",
	})
	if err != nil {
		return d.fail(err)
	}
	d.detail("uploaded; ETag %s", props.ETag)

	d.say("Download blob %s", blobName)
	blob, err := d.blobs.Download(ctx, d.container, blobName, service.Conditions{})
	if err != nil {
		return d.fail(err)
	}
	data, err := io.ReadAll(blob.Body)
	if cerr := blob.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d.fail(err)
	}
	d.detail("%q (%d bytes, %s)", data, len(data), blob.Properties.ContentType)
	if !bytes.Equal(data, content) {
		return d.fail(errors.New("the downloaded blob differs from the uploaded one"))
	}

	fmt.Fprintln(d.out, "Done.")
	return nil
}

// describe returns the first sentence of the service's message, or the error's text when
// there is no message.
func describe(se *abstractions.StatusError) string {
	msg := se.Message
	if msg == "" {
		return se.Error()
	}
	msg = oneLine(msg)
	if i := strings.Index(msg, ". "); i >= 0 {
		msg = msg[:i+1]
	}
	return msg
}

// formatRow renders a row's keys and custom properties, properties sorted by name.
func formatRow(r service.Row) string {
	props := slices.Clone(r.Properties)
	slices.SortFunc(props, func(a, b service.Property) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	fmt.Fprintf(&b, "(%s, %s)", r.PartitionKey, r.RowKey)
	for _, p := range props {
		b.WriteString(" " + p.Name + "=" + formatValue(p.Value))
	}
	return b.String()
}

// formatValue renders strings quoted and numbers plainly; other kinds keep their EDM name.
func formatValue(v service.Value) string {
	switch v.Kind() {
	case service.KindString:
		return strconv.Quote(v.Str())
	case service.KindInt32, service.KindInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case service.KindBool:
		return strconv.FormatBool(v.Bool())
	default:
		return v.String()
	}
}
