package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/unified-data/gotables/tables/feed"
)

func feedCommand() *command {
	return &command{
		name:    "feed",
		args:    "status|replay --table T [flags]",
		summary: "show a table's change feed backlog, or send its dead letters back to the relays",
		about: `Feed status prints the backlog of a table's change feed (package tables/feed): the
partitions the registry marks as having pending records, the records pending in them and the
age of the oldest, the dead letters (records whose handler kept failing) and the delivered
records kept for a while. It reads the registry and the partitions it lists, keys only, so
it costs requests in proportion to the work pending, not to the table.

Feed replay moves every dead letter back to the pending records, in its place by key, and
marks its partition, so that the relays deliver it again; run it once the handler's bug is
fixed.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			account := accountFlags(fs)
			table := fs.String("table", "", "the table (required)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) == 0 || (args[0] != "status" && args[0] != "replay") {
					return &usageError{"say status or replay"}
				}
				if err := fs.Parse(args[1:]); err != nil {
					return &usageError{err.Error()}
				}
				if rest := fs.Args(); len(rest) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
				}
				if err := needTable(*table); err != nil {
					return err
				}
				cs, err := needAccount(account)
				if err != nil {
					return err
				}
				acct, closeAccount, err := tableAccount(cs)
				if err != nil {
					return err
				}
				defer closeAccount()
				if args[0] == "replay" {
					r, err := feed.TableRelay(acct, *table, 0, &feed.RelayOptions{Name: "udtables"})
					if err != nil {
						return err
					}
					n, err := r.Replay(ctx)
					if err != nil {
						return err
					}
					fmt.Fprintf(stdout, "replay: %d dead letters sent back to the relays\n", n)
					return nil
				}
				b, err := feed.TableStatus(ctx, acct, *table)
				if err != nil {
					return err
				}
				oldest := "none"
				if !b.Oldest.IsZero() {
					oldest = time.Since(b.Oldest).Round(time.Second).String() + " old"
				}
				fmt.Fprintf(stdout, "pending: %d records in %d partitions (oldest %s)\ndead letters: %d in %d partitions\nkept after delivery: %d in %d partitions\n",
					b.Pending, b.Partitions, oldest, b.Dead, b.DeadPartitions, b.Kept, b.KeptPartitions)
				return nil
			}
		},
	}
}
