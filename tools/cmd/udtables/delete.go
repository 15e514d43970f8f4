package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/unified-data/gotables/tables/backup"
)

// deleteCommand is `udtables delete --where F`, and with clear `udtables clear`, which
// deletes every row.
func deleteCommand(clear bool) *command {
	c := &command{
		name:    "delete",
		args:    "--table T --where FILTER [--dry-run] [--azurite] [flags]",
		summary: "delete the entities an OData filter selects",
		about: `Delete deletes the entities of a table whose main row the OData filter selects, as the
service evaluates it ("PartitionKey eq 'p1' and Status eq 'done'"). An entity goes whole: its
continuation rows and partition-index rows with it, in entity-group transactions of at most 100 deletes of one
partition, each row on condition of the version read, so an entity another writer changes
meanwhile is left. Blobs of deleted entities are left to the orphan sweep of the program that
owns the table. --dry-run counts what would go and deletes nothing.

A delete of every row needs --all-rows (or use clear). An interrupted run has deleted what it
reported; run it again to delete the rest.`,
	}
	if clear {
		c.name, c.args, c.summary = "clear", "[--table] T --all-rows [--dry-run] [--azurite] [flags]", "delete every row of a table, keeping the table"
		c.about = `Clear deletes every entity of a table and keeps the table (its name, its access policies),
as delete does with a filter that selects everything. It refuses to run without --all-rows.
--dry-run counts what would go and deletes nothing. An interrupted run has deleted what it
reported; run it again to delete the rest.`
	}
	c.flags = func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
		common := declareCommon(fs, "the table to delete from (required)")
		where := new(string)
		if !clear {
			where = fs.String("where", "", "the OData filter of the entities to delete (required, unless --all-rows)")
		}
		all := fs.Bool("all-rows", false, "allow a delete of every row of the table")
		dry := fs.Bool("dry-run", false, "count what would be deleted; delete nothing")
		return func(ctx context.Context, args []string, stdout io.Writer) error {
			if clear && len(args) > 0 && *common.table == "" {
				// udtables clear T [flags]: the flags after the table's name.
				*common.table = args[0]
				if err := fs.Parse(args[1:]); err != nil {
					return &usageError{err.Error()}
				}
				args = fs.Args()
			}
			if err := common.check(args); err != nil {
				return err
			}
			if err := common.needTable(); err != nil {
				return err
			}
			switch {
			case *where == "" && !*all && clear:
				return &usageError{"clear deletes every row of " + *common.table + ": add --all-rows to confirm (or --dry-run to count them)"}
			case *where == "" && !*all:
				return &usageError{"--where is required: a delete without a filter would delete every row; give --all-rows to mean that, or use clear"}
			case *where != "" && *all:
				return &usageError{"--where and --all-rows contradict each other: give one"}
			}
			acct, closeAcct, err := common.open()
			if err != nil {
				return err
			}
			defer closeAcct()
			bar := newProgressView(*common.progress, c.name+" "+*common.table, func(backup.Stats) float64 { return -1 })
			st, err := backup.Delete(ctx, acct, *common.table, *where, &backup.Options{DryRun: *dry, Progress: bar.update, Logger: bar.logger()})
			bar.done()
			verb := "deleted"
			if *dry {
				verb = "would delete"
			}
			line := fmt.Sprintf("%s %d entities (%d rows) of %s in %v", verb, st.Entities, st.Rows, *common.table, st.Elapsed.Round(time.Millisecond))
			if err != nil {
				fmt.Fprintln(stdout, line+"; interrupted: run the same command again to delete the rest")
				return err
			}
			fmt.Fprintln(stdout, line)
			return nil
		}
	}
	return c
}
