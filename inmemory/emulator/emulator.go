package emulator

import (
	"context"
	cryptomd5 "crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/unified-data/gotables/inmemory/memservice"
)

// The storage emulator's development account, which "UseDevelopmentStorage=true" names. The
// key is public and grants nothing outside an emulator.
const (
	DevelopmentAccount = "devstoreaccount1"
	DevelopmentKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// An Account is a storage account the emulator serves: its name and its key.
type Account struct {
	Name string
	Key  []byte
}

var accountNameRE = regexp.MustCompile(`^[a-z0-9]{3,24}$`)

// ParseAccount reads an account given as name:key, the key in base64 as a connection string
// holds it. The name is 3 to 24 lower-case letters and digits, as an Azure account's.
func ParseAccount(s string) (Account, error) {
	name, key, ok := strings.Cut(s, ":")
	if !ok {
		return Account{}, fmt.Errorf("emulator: account %q is not name:key", s)
	}
	if !accountNameRE.MatchString(name) {
		return Account{}, fmt.Errorf("emulator: account name %q is not 3 to 24 lower-case letters and digits", name)
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(k) == 0 {
		return Account{}, fmt.Errorf("emulator: the key of account %q is not base64", name)
	}
	return Account{Name: name, Key: k}, nil
}

// Options configure a Handler. The zero Options (or nil) serve the development account
// alone, each account over a new memory service, without request logs.
type Options struct {
	// Accounts are served beside the development account.
	Accounts []Account
	// Service returns the memory service that holds an account's tables; nil makes a new
	// one (memservice.New()) for each account. It is called once per account, by New.
	Service func(account string) *memservice.Service
	// Logger receives one record per request (method, path, query, status, error code,
	// duration, request id); nil logs nothing.
	Logger *slog.Logger
	// DataDir, when not empty, keeps each account's tables and blobs in a directory of its own
	// under it (see "Persistence" in the package documentation); the services Service
	// returns must then be empty. Empty keeps everything in memory only.
	DataDir string
	// SnapshotEvery is how many changes an account's log holds before a snapshot
	// replaces it; 0 means 100,000.
	SnapshotEvery int
	// Faults are injected into the requests they match (see "Fault injection" in the
	// package documentation); ParseFaults reads them from the command's grammar.
	Faults []*FaultRule
}

// Handler is an http.Handler that speaks the Azure Table service's REST protocol over memory
// services. It is safe for concurrent use.
type Handler struct {
	accounts map[string]*account
	stores   []*store // with Options.DataDir, one per account
	log      *slog.Logger
	now      func() time.Time // the clock request dates are checked against
	faults   []*FaultRule
	sleep    func(ctx context.Context, d time.Duration) error // how injected delays wait
	blobs    *blobHandler                                     // the Blob service of the same accounts (blob.go)
}

type account struct {
	name  string
	key   []byte
	svc   *memservice.Service
	acls  tableACLs
	blobs *blobState // what the blob service keeps beside svc's blobs (blob.go)
	store *store     // with Options.DataDir
}

// New returns a Handler serving the development account and opts.Accounts. It fails when an
// account is named twice or has an empty key, when a fault rule cannot be applied (a
// Throttle without a rate), and, with a data directory, when the
// directory cannot be read (a damaged file is reported as a *CorruptError). A Handler with a
// data directory must be closed.
func New(opts *Options) (_ *Handler, err error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := checkFaults(opts.Faults); err != nil {
		return nil, err
	}
	h := &Handler{accounts: make(map[string]*account), log: opts.Logger, now: time.Now, faults: opts.Faults, sleep: sleep}
	defer func() {
		if err != nil {
			_ = h.Close()
		}
	}()
	devKey, _ := base64.StdEncoding.DecodeString(DevelopmentKey)
	all := append([]Account{{Name: DevelopmentAccount, Key: devKey}}, opts.Accounts...)
	for _, a := range all {
		if _, dup := h.accounts[a.Name]; dup {
			return nil, fmt.Errorf("emulator: account %q is given twice", a.Name)
		}
		if len(a.Key) == 0 {
			return nil, fmt.Errorf("emulator: account %q has no key", a.Name)
		}
		var svc *memservice.Service
		if opts.Service != nil {
			svc = opts.Service(a.Name)
		}
		if svc == nil {
			svc = memservice.New()
		}
		acct := &account{name: a.Name, key: a.Key, svc: svc, blobs: newBlobState()}
		if opts.DataDir != "" {
			// The account's directory is named after it.
			if !accountNameRE.MatchString(a.Name) {
				return nil, fmt.Errorf("emulator: account name %q is not 3 to 24 lower-case letters and digits", a.Name)
			}
			st, err := openStore(filepath.Join(opts.DataDir, a.Name), svc, acct.blobs, opts.SnapshotEvery)
			if err != nil {
				return nil, err
			}
			h.stores = append(h.stores, st)
			acct.store = st
		}
		h.accounts[a.Name] = acct
	}
	if opts.DataDir != "" {
		for _, acct := range h.accounts {
			if err := acct.acls.load(filepath.Join(opts.DataDir, acct.name), acct.svc); err != nil {
				return nil, err
			}
		}
	}
	h.blobs = newBlobHandler(h)
	return h, nil
}

// Close writes a snapshot of each account's tables and blobs to the data directory and closes its
// files; a write after it fails with 500 InternalError. Stop serving first (as
// http.Server.Shutdown does). Without a data directory it does nothing.
func (h *Handler) Close() error {
	var errs []error
	for _, st := range h.stores {
		errs = append(errs, st.close())
	}
	h.stores = nil
	return errors.Join(errs...)
}

// maxBody is the largest request body the service reads (4 MiB).
const maxBody = 4 << 20

// ServeHTTP answers one request of the table protocol.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	req := &request{exchange: exchange{r: r, w: rec, h: h, id: newRequestID(), start: start}}
	req.serve()
	req.logDone("table")
}

// redacted is the URL's query for the log, with the signature of a shared access signature
// taken out.
func redacted(u *url.URL) string {
	q := u.Query()
	if !q.Has("sig") {
		return u.RawQuery
	}
	q.Set("sig", "REDACTED")
	return q.Encode()
}

// recorder remembers the status and error code a response was written with, for the log.
type recorder struct {
	http.ResponseWriter
	status int
	code   string
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.code = r.Header().Get("x-ms-error-code")
	r.ResponseWriter.WriteHeader(status)
}

// An exchange is what a request of either protocol (tables, blobs) holds from start to
// end: the request, the writer of its answer, and what the log and fault injection need.
type exchange struct {
	r     *http.Request
	w     *recorder
	h     *Handler
	id    string
	start time.Time
	// faulted is the fault injected into the request, if any.
	faulted Fault
}

// logDone writes the request's record to the handler's log, if it has one: INFO, or WARN
// for a 5xx answer or an injected fault. service names the endpoint: "table" or "blob".
func (x *exchange) logDone(service string) {
	log := x.h.log
	if log == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("service", service),
		slog.String("method", x.r.Method),
		slog.String("path", x.r.URL.EscapedPath()),
		slog.String("query", redacted(x.r.URL)),
		slog.Int("status", x.w.status),
		slog.Duration("duration", time.Since(x.start)),
		slog.String("request_id", x.id),
	}
	if x.w.code != "" {
		attrs = append(attrs, slog.String("error_code", x.w.code))
	}
	if x.faulted != 0 {
		attrs = append(attrs, slog.String("fault", x.faulted.String()))
	}
	level := slog.LevelInfo
	if x.w.status >= 500 || x.faulted != 0 {
		level = slog.LevelWarn
	}
	log.LogAttrs(x.r.Context(), level, "request", attrs...)
}

// setServiceHeaders sets the headers every answer of either service carries: the request
// id, the version, the date and the client's request id echoed.
func (x *exchange) setServiceHeaders() {
	hdr := x.w.Header()
	hdr.Set("x-ms-request-id", x.id)
	hdr.Set("x-ms-version", apiVersion(x.r))
	hdr.Set("Date", x.start.UTC().Format(http.TimeFormat))
	if id := x.r.Header.Get("x-ms-client-request-id"); id != "" {
		hdr.Set("x-ms-client-request-id", id)
	}
}

// A request is one request of the table protocol in progress.
type request struct {
	exchange
	acct *account
	sas  *sas // the request's shared access signature, if it has one
	body []byte
}

// serve authenticates the request, reads its body and dispatches it.
func (q *request) serve() {
	q.setServiceHeaders()
	if q.r.Method == http.MethodOptions {
		q.fail(errNotImplemented("CORS preflight requests"))
		return
	}
	acctName, rest := splitAccount(q.r.URL.EscapedPath())
	q.acct = q.h.accounts[acctName]
	if err := q.authenticate(); err != nil {
		q.fail(err)
		return
	}
	if err := checkVersion(q.r); err != nil {
		q.fail(err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(q.r.Body, maxBody+1))
	if err != nil {
		q.fail(errInvalidInput("The request body could not be read."))
		return
	}
	if len(body) > maxBody {
		q.fail(errBodyTooLarge())
		return
	}
	q.body = body
	if md5 := q.r.Header.Get("Content-MD5"); md5 != "" {
		sum := cryptomd5.Sum(body)
		if md5 != base64.StdEncoding.EncodeToString(sum[:]) {
			q.fail(statusError(http.StatusBadRequest, "Md5Mismatch",
				"The MD5 value specified in the request did not match the MD5 value calculated by the server."))
			return
		}
	}
	if err := q.checkContentType(); err != nil {
		q.fail(err)
		return
	}
	q.route(rest)
}

// apiVersion is the x-ms-version the response names: the request's, or the version the Go
// SDK sends.
func apiVersion(r *http.Request) string {
	if v := r.Header.Get("x-ms-version"); v != "" {
		return v
	}
	return "2019-02-02"
}

// checkVersion refuses an x-ms-version that is not a version, a date yyyy-mm-dd, with the
// service's 400 InvalidHeaderValue. (The service also refuses dates that name no version;
// the emulator accepts any date.)
func checkVersion(r *http.Request) error {
	v := r.Header.Get("x-ms-version")
	if v == "" {
		return nil
	}
	if _, err := time.Parse("2006-01-02", v); err != nil {
		return statusError(http.StatusBadRequest, "InvalidHeaderValue",
			"The value for one of the HTTP headers is not in the correct format.")
	}
	return nil
}

// splitAccount splits a path-style URL path into the account and the rest (without its
// leading slash).
func splitAccount(path string) (acct, rest string) {
	path = strings.TrimPrefix(path, "/")
	acct, rest, _ = strings.Cut(path, "/")
	return acct, rest
}

// newRequestID returns a random request id in the service's GUID form.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// baseURL is the URL of the account, as odata.metadata and Location name it.
func (q *request) baseURL() string {
	scheme := "http"
	if q.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + q.r.Host + "/" + q.acct.name
}

// route dispatches on the resource path: Tables, Tables('name'), $batch, a table, or an
// entity of a table.
func (q *request) route(rest string) {
	method := q.r.Method
	if method == http.MethodPost {
		if m := q.r.Header.Get("X-HTTP-Method"); m != "" {
			method = strings.ToUpper(m)
		}
	}
	res, err := q.resource(rest)
	if err != nil {
		q.fail(err)
		return
	}
	if err := q.checkQuery(res); err != nil {
		q.fail(err)
		return
	}
	if err := q.authorize(method, res); err != nil {
		q.fail(err)
		return
	}
	if p := q.faultPlan(callsOf(method, res), res.table); p.fault != 0 {
		q.inject(p, q.fail, "The server is busy.", func() { q.dispatch(method, res) })
		return
	}
	q.dispatch(method, res)
}

// dispatch answers the request on res with method.
func (q *request) dispatch(method string, res resource) {
	switch {
	case res.kind == resService:
		q.fail(errNotImplemented("service-level operations"))
	case res.kind == resBatch && method == http.MethodPost:
		q.batch()
	case res.kind == resTables && method == http.MethodGet:
		q.queryTables()
	case res.kind == resTables && method == http.MethodPost:
		q.createTable()
	case res.kind == resTable && method == http.MethodGet:
		q.getTable(res.table)
	case res.kind == resTable && method == http.MethodDelete:
		q.deleteTable(res.table)
	case res.kind == resEntities && method == http.MethodGet:
		q.queryEntities(res.table)
	case res.kind == resEntities && method == http.MethodPost:
		q.insertEntity(res.table)
	case res.kind == resEntity && method == http.MethodGet:
		q.getEntity(res)
	case res.kind == resACL && method == http.MethodGet:
		q.getACL(res.table)
	case res.kind == resACL && method == http.MethodPut:
		q.setACL(res.table)
	case res.kind == resEntity && (method == http.MethodPut || method == "MERGE" || method == http.MethodPatch || method == http.MethodDelete):
		q.writeEntity(method, res)
	default:
		q.fail(errNotImplemented(method + " on this resource"))
	}
}
