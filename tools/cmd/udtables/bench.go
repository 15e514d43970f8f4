package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/unified-data/gotables/tools/bench"
)

// testConnectionEnv names the environment variable the tests (and "make test") use for the
// emulator's connection string; bench and inspect read it when no account is given.
const testConnectionEnv = "UNIFIED_TABLES_TEST_CONNECTION_STRING"

// connectTimeout bounds the first request of bench and inspect: an unreachable endpoint
// fails the command within it instead of waiting out the SDK's retries. A variable so that
// tests need not wait as long.
var connectTimeout = 10 * time.Second

// accountFlags declares --connection-string and --azurite on fs and returns the function
// that resolves them: the flag, else --azurite, else the environment variable, else "".
func accountFlags(fs *flag.FlagSet) func() (string, error) {
	conn := fs.String("connection-string", "", "a storage account connection string (default $"+testConnectionEnv+")")
	azurite := fs.Bool("azurite", false, "use the Azurite emulator's well-known development account on its default ports")
	return func() (string, error) {
		switch {
		case *conn != "" && *azurite:
			return "", &usageError{"give --connection-string or --azurite, not both"}
		case *conn != "":
			return *conn, nil
		case *azurite:
			return bench.DevelopmentConnectionString, nil
		}
		return os.Getenv(testConnectionEnv), nil
	}
}

func benchCommand() *command {
	return &command{
		name:    "bench",
		args:    "[--azurite] [--ops N] [flags]",
		summary: "measure the library against hand-written Azure SDK code, and the memory backend",
		about: `Bench runs the same workloads through the library and through hand-written Azure SDK
code (aztables with map entities and encoding/json), in one process, against the same
account, alternating library and raw operations (the cache hits run one after another, as
on the memory backend, then their raw reads), and prints per workload the median time of
each side, the ratio library / raw, operations per second and the library's allocations per
operation. Workloads: point read (cache off, and a cache hit), insert, upsert, update (Strict), query of a 1,000-row
partition, one page of 100 rows after another, batch upsert of 1,000 rows over 10 partitions, count of 10,000 rows, and writing and reading a 1 MB text value stored split (against the same rows written by
hand in one transaction and read back with a point read and a range query).

The single-row operations (point read, insert, upsert, update) also run through the floor:
a plain net/http client that signs its own requests (SharedKeyLite) and encodes with
encoding/json, no SDK. Their rows add the floor's median, each side's median over it, and
each side's client CPU time per operation (user + system, from getrusage, in a pass where
the sides take turns in chunks of ten). The hot-row row times 32 goroutines making 25
Mutate increments each of one row against the floor's 800 read+update pairs one after
another. Then it runs the library's workloads on the in-memory backend.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `;
without any, only the memory backend runs. The benchmark uses a table with a random name and
deletes it at the end, also when interrupted. Progress goes to standard error.

Interrupted (SIGINT, SIGTERM), stopped by --timeout or by a failing workload, it prints the
rows of the workloads measured so far, with a last line saying it stopped, and exits with
status 1. --only runs a few workloads again without the whole run.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			account := accountFlags(fs)
			ops := fs.Int("ops", 200, "measured operations per single-row workload and side (1/20 of it for the workloads over many rows)")
			conc := fs.Int("concurrency", 1, "workers running each workload side by side")
			asJSON := fs.Bool("json", false, "write one JSON array instead of a table")
			only := fs.String("only", "", "run only the workloads whose name contains one of these comma-separated strings (such as \"indexed,find by index\")")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				if *ops < 1 {
					return &usageError{"--ops must be at least 1"}
				}
				if *conc < 1 {
					return &usageError{"--concurrency must be at least 1"}
				}
				cs, err := account()
				if err != nil {
					return err
				}
				if cs == "" {
					fmt.Fprintln(os.Stderr, "bench: no account given (--connection-string, --azurite or $"+testConnectionEnv+"): measuring the memory backend only")
				}
				return bench.Run(ctx, bench.Config{
					ConnectionString: cs,
					Ops:              *ops,
					Concurrency:      *conc,
					JSON:             *asJSON,
					Only:             splitList(*only),
					Progress:         os.Stderr,
					ConnectTimeout:   connectTimeout,
				}, stdout)
			}
		},
	}
}

// splitList returns the non-empty comma-separated items of s.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
