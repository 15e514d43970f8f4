package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/unified-data/gotables/tables/expiry"
)

func sweepExpiredCommand() *command {
	return &command{
		name:    "sweep-expired",
		args:    "--table T --column Expires [--rate N] [--max N] [flags]",
		summary: "delete the rows of a table whose expiry time has passed",
		about: `Sweep-expired deletes the rows of a table whose type declares an expiry time (the tag
option expires) and that expired at least a minute ago, each with its continuation rows,
index rows and blobs, on condition of the version read: a row renewed meanwhile is kept. It
reads only the partitions whose rows may have expired and, in each, the range of rows that
did, not the whole table. Running it again resumes an interrupted run. It writes no change
records: sweep a table with a change feed from a program that has the type (expiry.Sweep).

--column names the column the expiry field is stored in (the field's name). --rate bounds the
deletes per second, --max the deletes of this run.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			account := accountFlags(fs)
			table := fs.String("table", "", "the table (required)")
			column := fs.String("column", "", "the column of the expiry time (required)")
			rate := fs.Float64("rate", 0, "the most deletes per second (0: no bound)")
			max := fs.Int("max", 0, "the most deletes of this run (0: no bound)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				if *column == "" {
					return &usageError{"--column is required (the expiry time's column)"}
				}
				if err := needTable(*table); err != nil {
					return err
				}
				cs, err := needAccount(account)
				if err != nil {
					return err
				}
				// With blobs and the offload container, so the blobs of swept rows go too.
				acct, closeConns, err := openAccount(cs, "")
				if err != nil {
					return err
				}
				defer closeConns()
				rep, err := expiry.SweepTable(ctx, acct, *table, *column, &expiry.SweepOptions{Rate: *rate, Max: *max,
					Progress: func(r expiry.Report) {
						fmt.Fprintf(stdout, "partition %d: %d rows swept so far\n", r.Partitions, r.Swept)
					}})
				fmt.Fprintf(stdout, "sweep-expired: %d partitions, %d expired rows, %d swept, %d renewed meanwhile",
					rep.Partitions, rep.Expired, rep.Swept, rep.Renewed)
				if rep.OldestUnswept > 0 {
					fmt.Fprintf(stdout, "; the oldest row left expired %v ago", rep.OldestUnswept)
				}
				fmt.Fprintln(stdout)
				return err
			}
		},
	}
}
