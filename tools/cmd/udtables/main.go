// Command udtables is the companion tool of Unified Data Tables for Go.
//
// Usage:
//
//	udtables demo [--connection-string S]   walk through a store: CRUD, ETags, batches, deletes
//	udtables bench [--azurite] [--ops N]     the library against raw Azure SDK code, and in memory
//	udtables inspect --table T [--azurite]  a table's raw rows: columns, EDM types, sizes
//	udtables backup --table T --archive F   back a table up into an archive file, resumably
//	udtables restore --table T --archive F  restore an archive into a table (--verify: check it)
//	udtables copy --table T --to-table U    copy a table to another table or account
//	udtables delete --table T --where F     delete the entities an OData filter selects
//	udtables clear --table T --all-rows     delete every row of a table, keeping the table
//	udtables export --table T --out F       export a table as typed CSV (Storage Explorer's)
//	udtables import --table T --file F      import a typed CSV file, checked whole first
//	udtables index verify|rebuild --table T --index name=Column...
//	                                        check a table's partition indexes, or rebuild them
//	udtables feed status|replay --table T   a table's change feed backlog; dead letters re-sent
//	udtables help [command]                 show what a command does
//
// Every command accepts --help. A failure prints one line, "udtables: …", on standard error
// and exits with status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// A command is one subcommand of udtables.
type command struct {
	name    string
	args    string // the synopsis after the name, such as "[--connection-string S]"
	summary string // one line for the command list
	about   string // the paragraph "udtables help NAME" shows
	// flags declares the command's flags on fs and returns the function that runs the
	// command once they are parsed, with the remaining arguments.
	flags func(fs *flag.FlagSet) func(ctx context.Context, args []string, stdout io.Writer) error
}

// usageError is a mistake on the command line, as opposed to a failure of the work.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func commands() []*command {
	return []*command{demoCommand(), benchCommand(), inspectCommand(), backupCommand(), restoreCommand(), copyCommand(), indexCommand(), sweepExpiredCommand(), feedCommand(),
		deleteCommand(false), deleteCommand(true), exportCommand(), importCommand(), helpCommand()}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	ctx, stop := interrupts()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interrupts returns a context cancelled by SIGINT or SIGTERM, which every command stops
// on (bench printing the rows measured so far), and the function that restores the
// signals' default behaviour.
func interrupts() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// run executes the command line args and returns the process's exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 1
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" {
		printUsage(stdout)
		return 0
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "udtables: unknown command %q; run 'udtables help' for the list\n", name)
		return 1
	}

	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	// The flag package would print its own message and the whole usage on a bad flag; one
	// line from us says the same.
	fs.SetOutput(io.Discard)
	exec := cmd.flags(fs)
	timeout := commonFlags(fs, cmd)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandUsage(stdout, cmd)
			return 0
		}
		fmt.Fprintf(stderr, "udtables %s: %s; run 'udtables help %s'\n", cmd.name, oneLine(err.Error()), cmd.name)
		return 1
	}
	if *timeout < 0 {
		fmt.Fprintf(stderr, "udtables %s: --timeout must not be negative; run 'udtables help %s'\n", cmd.name, cmd.name)
		return 1
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if err := exec(ctx, fs.Args(), stdout); err != nil {
		if *timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(stderr, "udtables %s: gave up after %v (--timeout): %s\n", cmd.name, *timeout, oneLine(err.Error()))
			return 1
		}
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "udtables %s: %s; run 'udtables help %s'\n", cmd.name, oneLine(err.Error()), cmd.name)
			return 1
		}
		fmt.Fprintf(stderr, "udtables %s: %s\n", cmd.name, oneLine(err.Error()))
		return 1
	}
	return 0
}

// oneLine folds a message onto a single line: service messages often carry a request id
// and a time on lines of their own.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "udtables: the companion tool of Unified Data Tables for Go")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  udtables %-34s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'udtables help COMMAND' or 'udtables COMMAND --help' for a command's details.")
}

// commonFlags declares the flags every command but help has: --timeout.
func commonFlags(fs *flag.FlagSet, c *command) *time.Duration {
	var timeout time.Duration
	if c.name != "help" {
		fs.DurationVar(&timeout, "timeout", 0, "give up after this long (such as 30s or 5m); 0 means no limit")
	}
	return &timeout
}

func printCommandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: udtables %s\n\n%s\n", strings.TrimSpace(c.name+" "+c.args), c.about)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs)
	commonFlags(fs, c)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

func helpCommand() *command {
	return &command{
		name:    "help",
		args:    "[command]",
		summary: "show the commands, or what one command does",
		about:   "Help lists the commands, or describes the named one and its flags.",
		flags: func(*flag.FlagSet) func(context.Context, []string, io.Writer) error {
			return func(_ context.Context, args []string, stdout io.Writer) error {
				switch len(args) {
				case 0:
					printUsage(stdout)
					return nil
				case 1:
					c := lookup(args[0])
					if c == nil {
						return &usageError{fmt.Sprintf("unknown command %q", args[0])}
					}
					printCommandUsage(stdout, c)
					return nil
				default:
					return &usageError{"help takes at most one command name"}
				}
			}
		},
	}
}
