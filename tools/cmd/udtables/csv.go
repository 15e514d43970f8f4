package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/unified-data/gotables/tables/backup"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		args:    "--table T --format csv --out FILE [--untyped] [--timestamps] [--azurite] [flags]",
		summary: "export a table as typed CSV, as Azure Storage Explorer does",
		about: `Export writes the rows of a table (or of the --partition partitions) to a CSV file in Azure
Storage Explorer's typed format: PartitionKey, RowKey, then each property's column followed by
a column named after it with "@type" holding its EDM type (Edm.String, Edm.Int32, …). Storage
Explorer, a spreadsheet and udtables import read it back, every type kept. --untyped leaves
the @type columns out (a plain spreadsheet file; import then infers types with --untyped);
--timestamps adds each row's Timestamp.

An entity that holds a large value (split over cells or rows, or offloaded to a blob) cannot
be one CSV row: the export then fails, naming it, and writes nothing. Back such a table up
with backup instead.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			common := declareCommon(fs, "the table to export (required)")
			format := fs.String("format", "csv", "the file's format: csv (the only one)")
			out := fs.String("out", "", "the file to write (required; - for standard output)")
			untyped := fs.Bool("untyped", false, "write no @type columns")
			stamps := fs.Bool("timestamps", false, "write a Timestamp column")
			var parts stringList
			fs.Var(&parts, "partition", "export only this partition (repeatable)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if err := common.check(args); err != nil {
					return err
				}
				if err := common.needTable(); err != nil {
					return err
				}
				if *format != "csv" {
					return &usageError{fmt.Sprintf("--format is csv, not %q (use backup for an archive)", *format)}
				}
				if *out == "" {
					return &usageError{"--out is required (- writes to standard output)"}
				}
				acct, closeAcct, err := common.open()
				if err != nil {
					return err
				}
				defer closeAcct()
				// The file is written only once the export succeeded: a refused or failed
				// export leaves no partial file behind.
				var buf bytes.Buffer
				bar := newProgressView(*common.progress, "export "+*common.table, func(backup.Stats) float64 { return -1 })
				st, err := backup.ExportCSV(ctx, acct, *common.table, &buf, &backup.Options{Partitions: parts, Untyped: *untyped, Timestamps: *stamps,
					Progress: bar.update, Logger: bar.logger()})
				bar.done()
				if err != nil {
					return err
				}
				if *out == "-" {
					_, err = stdout.Write(buf.Bytes())
					return err
				}
				if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "exported %d rows of %s to %s\n", st.Rows, *common.table, *out)
				return nil
			}
		},
	}
}

func importCommand() *command {
	return &command{
		name:    "import",
		args:    "--table T --file FILE [--untyped] [--existing refuse|skip|replace] [--azurite] [flags]",
		summary: "import a typed CSV file, as Azure Storage Explorer writes it, into a table",
		about: `Import writes the rows of a CSV file into a table, created when missing. The file is typed CSV
as export and Azure Storage Explorer write it (a "Name@type" column beside each property; type
names with or without "Edm."); a property without an @type column holds text, or with
--untyped a value whose type is inferred from it (true/false, whole numbers, numbers, ISO 8601
times, GUIDs, else text). A Timestamp column is ignored.

Nothing is written until the whole file is read and checked: its syntax, each value against
its type, each key and property name, each row's size, no key twice. The first problem stops
the import with its line number. A table that holds rows is refused unless --existing says
what to do with the rows it already has.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			common := declareCommon(fs, "the table to import into (required)")
			file := fs.String("file", "", "the CSV file to read (required)")
			untyped := fs.Bool("untyped", false, "infer the types of values that have no @type column")
			existing := fs.String("existing", "refuse", "what to do with rows the table already holds: refuse (the whole import, if the table holds any row), skip or replace")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if err := common.check(args); err != nil {
					return err
				}
				if err := common.needTable(); err != nil {
					return err
				}
				if *file == "" {
					return &usageError{"--file is required"}
				}
				ex, err := parseExisting(*existing)
				if err != nil {
					return err
				}
				f, err := os.Open(*file)
				if err != nil {
					return err
				}
				defer f.Close()
				acct, closeAcct, err := common.open()
				if err != nil {
					return err
				}
				defer closeAcct()
				bar := newProgressView(*common.progress, "import "+*common.table, func(backup.Stats) float64 { return -1 })
				st, err := backup.ImportCSV(ctx, acct, *common.table, bufio.NewReader(f), &backup.Options{Untyped: *untyped, Existing: ex,
					Progress: bar.update, Logger: bar.logger()})
				bar.done()
				if errors.Is(err, backup.ErrNotEmpty) {
					return fmt.Errorf("%w; give --existing skip or replace to import into it", err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "imported %d rows from %s into %s%s\n", st.Rows, *file, *common.table, skipped(st))
				return nil
			}
		},
	}
}

func skipped(st backup.Stats) string {
	switch {
	case st.Skipped > 0:
		return fmt.Sprintf(" (%d skipped)", st.Skipped)
	case st.Replaced > 0:
		return fmt.Sprintf(" (%d replaced)", st.Replaced)
	}
	return ""
}
