// Command udtables-emulator serves the in-memory table service over the Azure Table REST
// protocol on loopback, so that any client (the Azure SDKs in every language, Azure Storage
// Explorer, a service's integration tests) can use it where it would use Azurite:
//
//	go run ./tools/cmd/udtables-emulator                       # 127.0.0.1:10002
//	udtables-emulator -addr 127.0.0.1:20002 -account acct1:a2V5 -log json
//	udtables-emulator -addr 127.0.0.1:20012 -cosmos            # as Azure Cosmos DB for Table
//
// The default addresses are the table and blob endpoints that UseDevelopmentStorage=true
// names (-addr 127.0.0.1:10002, -blob-addr 127.0.0.1:10000; -blob-addr off serves no blobs),
// and the development account devstoreaccount1 with its well-known key is always served;
// -account (repeatable) adds accounts as name:base64key. URLs are path-style
// (http://127.0.0.1:10002/devstoreaccount1/...). Data lives in memory and is gone when the
// process ends, unless -data names a directory: then every table and blob write the
// emulator acknowledges is in a write-ahead log there, fsynced before the response, and
// survives a crash of the process or the machine ("Persistence" in package
// inmemory/emulator). Package inmemory/emulator says what the protocol supports. With -cosmos every account behaves as
// Azure Cosmos DB for Table where its FAQ says it differs from Table Storage
// (memservice.Cosmos: short keys, 2 MB transactions, case-sensitive table names, reserved
// property names, unsorted query results); a client must be told it talks to Cosmos DB,
// since the endpoint does not say so (tables.Options.Service, udtables --cosmos).
//
// It is a command of its own rather than a udtables subcommand so that the binary links
// neither the Azure SDK nor the library's engine: it is small, builds with CGO_ENABLED=0 into
// a static binary, and starts in a few milliseconds. Each request is logged with log/slog
// (-log text, json or off). SIGINT or SIGTERM stops it gracefully: it stops accepting,
// lets requests in flight finish (for at most 10 seconds), writes a snapshot of the data
// directory and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/inmemory/memservice"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "udtables-emulator:", err)
		stop()
		os.Exit(1)
	}
}

// accountFlags collects repeated -account flags.
type accountFlags []emulator.Account

func (a *accountFlags) String() string {
	names := make([]string, len(*a))
	for i, acct := range *a {
		names[i] = acct.Name
	}
	return strings.Join(names, ",")
}

func (a *accountFlags) Set(s string) error {
	acct, err := emulator.ParseAccount(s)
	if err != nil {
		return err
	}
	*a = append(*a, acct)
	return nil
}

// shutdownGrace is how long requests in flight may take to finish after a signal.
const shutdownGrace = 10 * time.Second

// run serves until ctx ends, then shuts the server down and returns. ready, when not nil,
// is called with the address once the listener is open.
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	addr, blobAddr, opts := cfg.addr, cfg.blobAddr, cfg.opts
	h, err := emulator.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = h.Close()
		return err
	}
	lns := []net.Listener{ln}
	handlers := []http.Handler{h}
	if blobAddr != "" && blobAddr != "off" {
		bln, err := net.Listen("tcp", blobAddr)
		if err != nil {
			_ = ln.Close()
			_ = h.Close()
			return err
		}
		lns = append(lns, bln)
		handlers = append(handlers, h.Blobs())
	}
	fmt.Fprintf(stderr, "udtables-emulator: tables at http://%s/%s\n", ln.Addr(), emulator.DevelopmentAccount)
	if len(lns) > 1 {
		fmt.Fprintf(stderr, "udtables-emulator: blobs at http://%s/%s\n", lns[1].Addr(), emulator.DevelopmentAccount)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	srvs := make([]*http.Server, len(lns))
	done := make(chan error, len(lns))
	for i, l := range lns {
		srvs[i] = &http.Server{Handler: handlers[i], ReadHeaderTimeout: 30 * time.Second}
		go func() { done <- srvs[i].Serve(l) }()
	}
	// Serve until the context ends or a server fails; then shut all down.
	var serveErr error
	select {
	case serveErr = <-done:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, srv := range srvs {
		err = errors.Join(err, srv.Shutdown(sctx))
	}
	pending := len(srvs)
	if serveErr != nil {
		pending--
		if !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
	}
	for range pending {
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	// A snapshot of the data directory, so that the next start reads no log.
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintln(stderr, "udtables-emulator: stopped")
	return err
}

// config is what the command line asks for.
type config struct {
	addr     string // the table endpoint's host:port
	blobAddr string // the blob endpoint's host:port; empty or "off": none
	opts     *emulator.Options
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("udtables-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:10002", "`host:port` of the table endpoint")
	blobAddr := fs.String("blob-addr", "127.0.0.1:10000", "`host:port` of the blob endpoint; empty or off: no blob endpoint")
	logFormat := fs.String("log", "text", "request log format: text, json or off")
	dataDir := fs.String("data", "", "keep the tables and blobs in `dir` (a write-ahead log and snapshots); empty: in memory only")
	snapshotEvery := fs.Int("snapshot-every", 0, "with -data, write a snapshot after `n` logged changes (0: 100,000)")
	faultSpec := fs.String("faults", "", "inject faults: `rules` fault:calls[:table][:option...], comma-separated, such as 503:write:every=10,delay=200ms:read,throttle=100/s:all (see docs/emulator.md)")
	cosmos := fs.Bool("cosmos", false, "behave as Azure Cosmos DB for Table where it differs from Table Storage (see memservice.Cosmos)")
	var accounts accountFlags
	fs.Var(&accounts, "account", "an extra account as `name:base64key` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	faults, err := emulator.ParseFaults(*faultSpec)
	if err != nil {
		return config{}, err
	}
	var logger *slog.Logger
	switch *logFormat {
	case "text":
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	case "json":
		logger = slog.New(slog.NewJSONHandler(stderr, nil))
	case "off":
	default:
		return config{}, fmt.Errorf("-log must be text, json or off, not %q", *logFormat)
	}
	opts := &emulator.Options{Accounts: accounts, Logger: logger, DataDir: *dataDir, SnapshotEvery: *snapshotEvery, Faults: faults}
	if *cosmos {
		opts.Service = func(string) *memservice.Service { return memservice.New(memservice.Cosmos()) }
	}
	return config{*addr, *blobAddr, opts}, nil
}
