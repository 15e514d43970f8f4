package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/blobconn"
	"github.com/unified-data/gotables/tables/service"
	"github.com/unified-data/gotables/tools/bench"
)

// The backup, restore and copy commands: package backup on the command line.

// stringList is a flag that may be given several times.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// archiveFlags are the flags backup, restore and copy share.
type archiveFlags struct {
	account   func() (string, error)
	table     *string
	container *string
	progress  *string
	cosmos    *bool
}

func declareCommon(fs *flag.FlagSet, tableHelp string) *archiveFlags {
	return &archiveFlags{
		account:   accountFlags(fs),
		table:     fs.String("table", "", tableHelp),
		container: fs.String("offload-container", "", "the account's blob offload container (default \"unified-tables-values\")"),
		progress:  fs.String("progress", "auto", "how to show progress: bar (one redrawn line), log (a line every 5s), none, or auto (bar on a terminal, log otherwise)"),
		cosmos:    fs.Bool("cosmos", false, "the account is Azure Cosmos DB for Table behind an endpoint that does not say so (a proxy, a custom domain, an emulator)"),
	}
}

// product is the service an account is named to be with --cosmos: Cosmos DB, or 0 to tell
// from the endpoint.
func product(cosmos bool) service.Product {
	if cosmos {
		return service.Cosmos
	}
	return 0
}

// transportOf returns the transport the accounts of backup, restore and copy send their
// requests through; tests put a fault injector in front of it.
var transportOf = func(tr *http.Transport) policy.Transporter { return &http.Client{Transport: tr} }

// openAccount returns an account over a connection string with blobs and the offload
// container, and the function that closes its connections.
func openAccount(cs, container string) (*tables.Account, func(), error) {
	return openAccountOf(cs, container, 0)
}

// openAccountOf is openAccount of the service p (0: told from the endpoint). A connection
// string that names no blob endpoint (an Azure Cosmos DB for Table account's, which has no
// blob service) gives an account without blobs: its tables are copied, and a value stored
// in a blob cannot be (the store says so).
func openAccountOf(cs, container string, p service.Product) (*tables.Account, func(), error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	noBlobs := false
	opts := &tables.Options{
		ClientOptions: azcore.ClientOptions{Transport: transportOf(tr)},
		Blobs: func(ep blobconn.Endpoint) (service.Blobs, error) {
			if ep.URL == "" {
				noBlobs = true
				return nil, nil
			}
			return azblobs.Connect(ep)
		},
		BlobOffload: &tables.BlobOffloadOptions{Container: container},
		Service:     p,
	}
	acct, err := tables.NewAccount(cs, opts)
	if err == nil && noBlobs {
		opts.Blobs, opts.BlobOffload = nil, nil
		acct, err = tables.NewAccount(cs, opts)
	}
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, fmt.Errorf("connection string: %w", err)
	}
	return acct, tr.CloseIdleConnections, nil
}

// tableAccount returns an account over a connection string that never creates a table
// (the commands that read or repair one table), and the function that closes its
// connections.
func tableAccount(cs string) (*tables.Account, func(), error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	acct, err := tables.NewAccount(cs, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}},
		NeverCreateTables: true})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, fmt.Errorf("connection string: %w", err)
	}
	return acct, tr.CloseIdleConnections, nil
}

func (f *archiveFlags) check(args []string) error {
	if len(args) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
	}
	switch *f.progress {
	case "auto", "bar", "log", "none":
	default:
		return &usageError{fmt.Sprintf("--progress is bar, log, none or auto, not %q", *f.progress)}
	}
	return nil
}

func (f *archiveFlags) needTable() error { return needTable(*f.table) }

func (f *archiveFlags) open() (*tables.Account, func(), error) {
	cs, err := needAccount(f.account)
	if err != nil {
		return nil, nil, err
	}
	return openAccountOf(cs, *f.container, product(*f.cosmos))
}

// needTable refuses a missing --table, or one the service would refuse as a name.
func needTable(table string) error {
	if table == "" {
		return &usageError{"--table is required"}
	}
	if err := service.CheckTableName(table); err != nil {
		return &usageError{err.Error()}
	}
	return nil
}

// needAccount returns the connection string the account flags give, refusing none.
func needAccount(account func() (string, error)) (string, error) {
	cs, err := account()
	if err != nil {
		return "", err
	}
	if cs == "" {
		return "", &usageError{"no account: give --connection-string or --azurite, or set $" + testConnectionEnv}
	}
	return cs, nil
}

func parseExisting(s string) (backup.Existing, error) {
	for _, e := range []backup.Existing{backup.Refuse, backup.Skip, backup.Replace} {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, &usageError{fmt.Sprintf("--existing is refuse, skip or replace, not %q", s)}
}

func backupCommand() *command {
	return &command{
		name:    "backup",
		args:    "--table T --archive FILE [--azurite] [flags]",
		summary: "back a table up into an archive file, entity by entity, resumably",
		about: `Backup writes every entity of a table (or of the partitions named with --partition) to an
archive file: gzip-compressed JSON Lines, each cell with its EDM type, each entity with its
continuation rows and the bytes of its blobs, checked against their SHA-256 as they are read.
zcat FILE | jq reads it. See docs/backup.md.

While it runs, a checkpoint file (FILE.checkpoint, or --checkpoint) records how far the archive
is complete. Run the same command again after an interruption and it resumes there; the
archive it completes is byte for byte the one an uninterrupted run writes. The table is not a
snapshot: each entity is whole, but rows written during the backup may or may not be in it.
Throttled or busy answers are retried after a pause, logged.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `.
Backup only reads the table.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			common := declareCommon(fs, "the table to back up (required)")
			archive := fs.String("archive", "", "the archive file to write (required)")
			var parts stringList
			fs.Var(&parts, "partition", "back up only this partition (repeat the flag for several)")
			parallel := fs.Int("parallel", 1, "read this many partitions at once (the archive is the same)")
			cp := fs.String("checkpoint", "", "the checkpoint file (default FILE.checkpoint)")
			verify := fs.Bool("verify", false, "read the archive back and check it once it is written")
			count := fs.Bool("count", false, "count the rows first (a keys-only scan) to show a percentage and an ETA")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if err := common.check(args); err != nil {
					return err
				}
				if err := common.needTable(); err != nil {
					return err
				}
				if *archive == "" {
					return &usageError{"--archive is required"}
				}
				if *parallel < 1 {
					return &usageError{"--parallel must be at least 1"}
				}
				acct, closeAcct, err := common.open()
				if err != nil {
					return err
				}
				defer closeAcct()
				var total int64
				if *count {
					if total, err = countRows(ctx, acct.Tables(), *common.table, parts); err != nil {
						return err
					}
				}
				bar := newProgressView(*common.progress, "backup "+*common.table, func(s backup.Stats) float64 {
					if total > 0 {
						return float64(s.Rows) / float64(total)
					}
					return -1
				})
				opts := &backup.Options{Partitions: parts, Parallel: *parallel, Checkpoint: *cp, Progress: bar.update, Logger: bar.logger()}
				if len(parts) == 0 {
					opts.Partitions = nil
				}
				st, err := backup.WriteFile(ctx, acct, *common.table, *archive, opts)
				bar.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "backed up %s to %s: %s\n", *common.table, *archive, summary(st))
				if *verify {
					return verifyFile(ctx, *archive, *common.progress, stdout)
				}
				return nil
			}
		},
	}
}

func restoreCommand() *command {
	return &command{
		name:    "restore",
		args:    "--table T --archive FILE [--azurite] [flags]",
		summary: "restore an archive into a table, or check it with --verify",
		about: `Restore writes the entities of an archive into a table, created when missing. Each entity's
blobs are uploaded first, as blobs of the destination table, then its rows in one transaction:
no entity is ever restored in part, and the restored rows share no blob with the source. A
table that holds rows is refused unless --existing says what to do with the entities it
already has: skip them or replace them.

Nothing is written before it is checked: each gzip member of the archive is read whole and its
checksum checked before its records are used, and each record is checked (blob bytes and split
values against their SHA-256, the counts against the trailer). An archive that turns out
damaged or cut stops the restore once the entities before the damage are written: as many as
--verify counts before it, each as the archive holds it. --verify checks the whole archive
first, without any account and without writing.

Throttled or busy answers, and requests that get no answer, are retried after a pause. A
transaction whose answer is lost is settled by reading its rows back: applied, it counts as
written; not, it is sent again.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			common := declareCommon(fs, "the table to restore into (required unless --verify)")
			archive := fs.String("archive", "", "the archive file to read (required)")
			existing := fs.String("existing", "refuse", "what to do with entities the table already holds: refuse (the whole restore, if the table holds any row), skip or replace")
			verify := fs.Bool("verify", false, "only read the archive and check it; write nothing")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if err := common.check(args); err != nil {
					return err
				}
				if *archive == "" {
					return &usageError{"--archive is required"}
				}
				ex, err := parseExisting(*existing)
				if err != nil {
					return err
				}
				if *verify {
					return verifyFile(ctx, *archive, *common.progress, stdout)
				}
				if err := common.needTable(); err != nil {
					return err
				}
				acct, closeAcct, err := common.open()
				if err != nil {
					return err
				}
				defer closeAcct()
				f, size, err := openArchive(*archive)
				if err != nil {
					return err
				}
				defer f.Close()
				bar := newProgressView(*common.progress, "restore "+*common.table, byteFraction(size))
				st, err := backup.Restore(ctx, acct, *common.table, f, &backup.Options{Existing: ex, Progress: bar.update, Logger: bar.logger()})
				bar.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "restored %s into %s: %s\n", *archive, *common.table, summary(st))
				return nil
			}
		},
	}
}

func copyCommand() *command {
	return &command{
		name:    "copy",
		args:    "--table T --to-connection-string S [flags]",
		summary: "copy a table to another table or account, entity by entity",
		about: `Copy copies a table, entity by entity, to a table of the same or another account, without an
archive: what a backup restored at once would write. The copy's blobs are its own, so the
source's deletes and orphan sweeps never damage it. The source is the account of
--connection-string (or --azurite, or $` + testConnectionEnv + `); the destination that of
--to-connection-string (or --to-azurite), in the same account when neither is given. An
account on Azure Cosmos DB for Table is known by its endpoint; --cosmos and --to-cosmos name
one whose endpoint does not say so.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			common := declareCommon(fs, "the table to copy (required)")
			toConn := fs.String("to-connection-string", "", "the destination account's connection string (default: the source account)")
			toAzurite := fs.Bool("to-azurite", false, "the destination is the Azurite emulator's development account")
			toTable := fs.String("to-table", "", "the destination table (default: the source table's name)")
			toCosmos := fs.Bool("to-cosmos", false, "the destination account is Azure Cosmos DB for Table behind an endpoint that does not say so")
			toContainer := fs.String("to-offload-container", "", "the destination's blob offload container (default \"unified-tables-values\")")
			var parts stringList
			fs.Var(&parts, "partition", "copy only this partition (repeat the flag for several)")
			parallel := fs.Int("parallel", 1, "read this many partitions at once")
			existing := fs.String("existing", "refuse", "what to do with entities the destination already holds: refuse, skip or replace")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if err := common.check(args); err != nil {
					return err
				}
				if err := common.needTable(); err != nil {
					return err
				}
				if *toConn != "" && *toAzurite {
					return &usageError{"give --to-connection-string or --to-azurite, not both"}
				}
				dstTable := *toTable
				if dstTable == "" {
					dstTable = *common.table
				}
				if err := service.CheckTableName(dstTable); err != nil {
					return &usageError{err.Error()}
				}
				if *parallel < 1 {
					return &usageError{"--parallel must be at least 1"}
				}
				ex, err := parseExisting(*existing)
				if err != nil {
					return err
				}
				srcCS, err := common.account()
				if err != nil {
					return err
				}
				if srcCS == "" {
					return &usageError{"no source account: give --connection-string or --azurite, or set $" + testConnectionEnv}
				}
				dstCS := *toConn
				switch {
				case *toAzurite:
					dstCS = bench.DevelopmentConnectionString
				case dstCS == "":
					dstCS = srcCS
				}
				if dstCS == srcCS && strings.EqualFold(dstTable, *common.table) {
					return &usageError{"the destination is the source table: give --to-table or another account"}
				}
				src, closeSrc, err := openAccountOf(srcCS, *common.container, product(*common.cosmos))
				if err != nil {
					return err
				}
				defer closeSrc()
				dst, closeDst, err := openAccountOf(dstCS, *toContainer, product(*toCosmos))
				if err != nil {
					return err
				}
				defer closeDst()
				bar := newProgressView(*common.progress, "copy "+*common.table, func(backup.Stats) float64 { return -1 })
				opts := &backup.Options{Partitions: parts, Parallel: *parallel, Existing: ex, Progress: bar.update, Logger: bar.logger()}
				if len(parts) == 0 {
					opts.Partitions = nil
				}
				st, err := backup.Copy(ctx, src, *common.table, dst, dstTable, opts)
				bar.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "copied %s to %s: %s\n", *common.table, dstTable, summary(st))
				return nil
			}
		},
	}
}

func openArchive(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

func byteFraction(size int64) func(backup.Stats) float64 {
	return func(s backup.Stats) float64 {
		if size <= 0 {
			return -1
		}
		return float64(s.Bytes) / float64(size)
	}
}

func verifyFile(ctx context.Context, path, progress string, stdout io.Writer) error {
	f, size, err := openArchive(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bar := newProgressView(progress, "verify "+path, byteFraction(size))
	st, err := backup.Verify(ctx, f, &backup.Options{Progress: bar.update})
	bar.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verified %s: complete, %s\n", path, summary(st))
	return nil
}

func summary(s backup.Stats) string {
	out := fmt.Sprintf("%d entities, %d rows, %d blobs (%s), %s archive, in %v", s.Entities, s.Rows, s.Blobs,
		humanBytes(s.BlobBytes), humanBytes(s.Bytes), s.Elapsed.Round(time.Millisecond))
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	if s.Replaced > 0 {
		out += fmt.Sprintf(", %d replaced", s.Replaced)
	}
	if s.Retries > 0 {
		out += fmt.Sprintf(", %d requests retried after throttling", s.Retries)
	}
	return out
}

// countRows counts a table's rows (or some partitions') with a keys-only scan.
func countRows(ctx context.Context, svc service.Tables, table string, parts []string) (int64, error) {
	filters := []string{""}
	if len(parts) > 0 {
		filters = filters[:0]
		for _, p := range parts {
			filters = append(filters, "PartitionKey eq "+service.QuoteString(p))
		}
	}
	var n int64
	for _, f := range filters {
		q := service.Query{Filter: f, Select: []string{"_SplitOf"}}
		for {
			page, err := svc.Query(ctx, table, q)
			if err != nil {
				return 0, fmt.Errorf("counting the rows of %s: %w", table, err)
			}
			n += int64(len(page.Rows))
			if page.Next == nil {
				break
			}
			q.Continuation = page.Next
		}
	}
	return n, nil
}

// progressView shows Stats on standard error: a bar redrawn in place on a terminal, a
// line every logEvery otherwise.
type progressView struct {
	mode     string
	label    string
	fraction func(backup.Stats) float64
	out      io.Writer
	last     time.Time
	drawn    bool
}

const logEvery = 5 * time.Second

// progressOut is where progress goes; tests replace it.
var progressOut io.Writer = os.Stderr

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgressView(mode, label string, fraction func(backup.Stats) float64) *progressView {
	if mode == "auto" {
		mode = "log"
		if isTerminal(progressOut) {
			mode = "bar"
		}
	}
	return &progressView{mode: mode, label: label, fraction: fraction, out: progressOut}
}

// logger logs backoffs on the same stream, as plain lines.
func (p *progressView) logger() *slog.Logger {
	if p.mode == "none" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(lineBreaker{p}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// lineBreaker ends a drawn bar's line before a log line.
type lineBreaker struct{ p *progressView }

func (l lineBreaker) Write(b []byte) (int, error) {
	if l.p.drawn {
		fmt.Fprintln(l.p.out)
		l.p.drawn = false
	}
	return l.p.out.Write(b)
}

func (p *progressView) update(s backup.Stats) {
	now := time.Now()
	switch p.mode {
	case "bar":
		fmt.Fprintf(p.out, "\r%s\x1b[K", p.line(s))
		p.drawn = true
	case "log":
		if now.Sub(p.last) < logEvery && !p.last.IsZero() {
			return
		}
		fmt.Fprintln(p.out, p.line(s))
	default:
		return
	}
	p.last = now
}

func (p *progressView) done() {
	if p.drawn {
		fmt.Fprintln(p.out)
		p.drawn = false
	}
}

// line renders the counts, the rate and, when the total is known, a bar and the ETA.
func (p *progressView) line(s backup.Stats) string {
	secs := s.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.Rows) / secs
	}
	out := fmt.Sprintf("%s: %d entities, %d rows, %s, %.0f rows/s", p.label, s.Entities, s.Rows, humanBytes(s.Bytes), rate)
	if f := p.fraction(s); f > 0 {
		f = min(f, 1)
		eta := time.Duration(secs/f*(1-f)) * time.Second
		if p.mode == "bar" {
			const width = 24
			n := int(f * width)
			out = fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("=", n), strings.Repeat(" ", width-n), f*100) + out
		} else {
			out += fmt.Sprintf(", %.0f%%", f*100)
		}
		out += fmt.Sprintf(", ETA %v", eta.Round(time.Second))
	}
	return out
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
