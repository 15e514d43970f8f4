package emulator

import (
	cryptomd5 "crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// The blob service: the same accounts and memory services as the table service, over the
// Blob service's REST protocol (see "Blobs" in the package documentation). What the memory
// service does not keep about a blob (its block list, the properties beyond its content
// type and encoding, the blocks staged for it) the emulator keeps beside it, per account,
// tied to the ETag of the version it describes.

// maxBlobBody is the largest body a Put Blob or Put Block may carry: the size up to which
// the SDKs upload a blob in one request (256 MiB). The service allows more.
const maxBlobBody = 256 << 20

// xmlHeader starts the service's XML bodies.
const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>` + "\n"

// blobHandler answers the blob protocol for a Handler's accounts.
type blobHandler struct {
	h     *Handler
	state map[string]*blobState // by account name
}

func newBlobHandler(h *Handler) *blobHandler {
	b := &blobHandler{h: h, state: make(map[string]*blobState, len(h.accounts))}
	for name, acct := range h.accounts {
		b.state[name] = acct.blobs
	}
	return b
}

func newBlobState() *blobState {
	return &blobState{staged: make(map[blobKey]*stagedBlocks), side: make(map[blobKey]*sideProps)}
}

// Blobs returns the handler of the Blob service of the same accounts: each account's
// containers and blobs are those of its memory service (memservice.Service is both a table
// and a blob service). Serve it on an address of its own, as the storage emulators do; a
// request to it is answered in the Blob service's XML, a request of the table protocol is
// not understood there. With Options.DataDir, blobs are kept there with the tables.
func (h *Handler) Blobs() http.Handler { return h.blobs }

// blobState is what the emulator keeps beside an account's memory service. Writes of blobs
// hold mu, so that a blob and what is kept beside it change together; reads hold it for
// reading.
type blobState struct {
	mu     sync.RWMutex
	staged map[blobKey]*stagedBlocks
	side   map[blobKey]*sideProps
}

type blobKey struct{ container, name string }

// sideProps is what the memory service does not keep of one version of a blob (the one with
// ETag etag): the properties the service stores beyond content type and encoding, and the
// committed block list.
type sideProps struct {
	etag               string
	contentMD5         string // base64, as the header carries it
	contentLanguage    string
	contentDisposition string
	cacheControl       string
	blocks             []committedBlock // nil: committed by Put Blob, no block list
}

type committedBlock struct {
	id   string
	size int64
}

// sideOf returns what is kept beside the blob with properties p, or an empty record when
// the kept one describes another version (the blob was written otherwise than through the
// emulator). The caller holds st.mu.
func (st *blobState) sideOf(k blobKey, p service.BlobProperties) *sideProps {
	if s := st.side[k]; s != nil && s.etag == p.ETag {
		return s
	}
	return &sideProps{}
}

// dropContainer forgets what is kept for the blobs of a container. The caller holds st.mu.
func (st *blobState) dropContainer(container string) {
	for k := range st.side {
		if k.container == container {
			delete(st.side, k)
		}
	}
	for k := range st.staged {
		if k.container == container {
			delete(st.staged, k)
		}
	}
}

// ServeHTTP answers one request of the blob protocol.
func (b *blobHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	q := &blobRequest{exchange: exchange{r: r, w: rec, h: b.h, id: newRequestID(), start: start}, b: b}
	q.serve()
	q.logDone("blob")
}

// A blobRequest is one request of the blob protocol in progress.
type blobRequest struct {
	exchange
	b     *blobHandler
	acct  *account
	st    *blobState
	sas   *blobSAS // the request's shared access signature, if it has one
	query url.Values
	body  []byte
}

func (q *blobRequest) serve() {
	q.setServiceHeaders()
	if q.r.Method == http.MethodOptions {
		q.fail(errNotImplemented("CORS preflight requests"))
		return
	}
	q.query = q.r.URL.Query()
	acctName, _ := splitAccount(q.r.URL.EscapedPath())
	q.acct = q.h.accounts[acctName]
	if err := q.authenticate(); err != nil {
		q.fail(err)
		return
	}
	q.st = q.b.state[q.acct.name]
	q.route()
}

// readBody reads the request's body, at most maxBlobBody bytes, and checks it against its
// Content-MD5 header.
func (q *blobRequest) readBody() error {
	if q.r.ContentLength > maxBlobBody {
		return errBodyTooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(q.r.Body, maxBlobBody+1))
	if err != nil {
		return errInvalidInput("The request body could not be read.")
	}
	if len(body) > maxBlobBody {
		return errBodyTooLarge()
	}
	if md5 := q.r.Header.Get("Content-MD5"); md5 != "" && md5 != md5Of(body) {
		return statusError(http.StatusBadRequest, "Md5Mismatch",
			"The MD5 value specified in the request did not match with the MD5 value calculated by the server.")
	}
	q.body = body
	return nil
}

func md5Of(b []byte) string {
	sum := cryptomd5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// route dispatches on the path (account, container, blob) and the query's restype and comp,
// after checking that the request's SAS, if any, allows the operation.
func (q *blobRequest) route() {
	_, rest := splitAccount(q.r.URL.Path)
	container, name, hasName := strings.Cut(rest, "/")
	for _, p := range []string{"snapshot", "versionid"} {
		if q.query.Has(p) {
			q.fail(errNotImplemented("blob snapshots and versions"))
			return
		}
	}
	restype, comp, method := q.query.Get("restype"), q.query.Get("comp"), q.r.Method
	read := method == http.MethodGet || method == http.MethodHead
	// op runs an operation of the kind calls on level needing one of perms, with the
	// faults the rules or the request's FaultHeader inject into it.
	op := func(level, perms string, calls Calls, run func()) {
		if err := q.authorize(level, perms); err != nil {
			q.fail(err)
			return
		}
		if p := q.faultPlan(calls, container); p.fault != 0 {
			q.inject(p, q.fail, blobServerBusy, run)
			return
		}
		run()
	}
	switch {
	case container == "":
		if comp == "list" && method == http.MethodGet && restype == "" {
			op(levelService, "l", ContainerCalls, q.listContainers)
			return
		}
		q.fail(errNotImplemented("service-level operations other than List Containers"))
	case !hasName || name == "":
		if restype != "container" {
			q.fail(errNotImplemented("the root container ($root)"))
			return
		}
		switch {
		case comp == "" && method == http.MethodPut:
			op(levelContainer, "cw", ContainerCalls, func() { q.createContainer(container) })
		case comp == "" && method == http.MethodDelete:
			op(levelContainer, "d", ContainerCalls, func() { q.deleteContainer(container) })
		case comp == "" && read:
			op(levelContainer, "r", ContainerCalls, func() { q.containerProperties(container) })
		case comp == "list" && method == http.MethodGet:
			op(levelContainer, "l", BlobReads, func() { q.listBlobs(container) })
		default:
			q.fail(errNotImplemented(method + " of container comp=" + comp))
		}
	default:
		switch {
		case comp == "" && method == http.MethodPut:
			op(levelObject, "cw", BlobWrites, func() { q.putBlob(container, name) })
		case comp == "" && read:
			op(levelObject, "r", BlobReads, func() { q.getBlob(container, name) })
		case comp == "" && method == http.MethodDelete:
			op(levelObject, "d", BlobWrites, func() { q.deleteBlob(container, name) })
		case comp == "block" && method == http.MethodPut:
			op(levelObject, "cw", BlobWrites, func() { q.putBlock(container, name) })
		case comp == "blocklist" && method == http.MethodPut:
			op(levelObject, "cw", BlobWrites, func() { q.putBlockList(container, name) })
		case comp == "blocklist" && method == http.MethodGet:
			op(levelObject, "r", BlobReads, func() { q.getBlockList(container, name) })
		case comp == "properties" && method == http.MethodPut:
			op(levelObject, "w", BlobWrites, func() { q.change(container, name, true) })
		case comp == "metadata" && method == http.MethodPut:
			op(levelObject, "w", BlobWrites, func() { q.change(container, name, false) })
		case comp == "metadata" && read:
			op(levelObject, "r", BlobReads, func() { q.getMetadata(container, name) })
		default:
			q.fail(errNotImplemented(method + " of blob comp=" + comp))
		}
	}
}

// blobServerBusy is the message of the Blob service's 503 ServerBusy when a server is
// unavailable (Azure's list of common error codes; the Table service says "The server is
// busy.").
const blobServerBusy = "The server is currently unable to receive requests. Please retry your request."

// blobErrorBody is the Blob service's error body.
type blobErrorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

// fail answers the request with err: the Blob service's XML error body, or no body for a
// HEAD request or a 304.
func (q *blobRequest) fail(err error) {
	se := asStatus(err)
	hdr := q.w.Header()
	hdr.Set("x-ms-error-code", se.ErrorCode)
	if q.r.Method == http.MethodHead || se.StatusCode == http.StatusNotModified {
		q.w.WriteHeader(se.StatusCode)
		return
	}
	msg := se.Message + "\nRequestId:" + q.id + "\nTime:" + service.FormatDateTime(q.start)
	body, _ := xml.Marshal(blobErrorBody{Code: se.ErrorCode, Message: msg})
	body = append([]byte(xmlHeader), body...)
	hdr.Set("Content-Type", "application/xml")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(se.StatusCode)
	_, _ = q.w.Write(body)
}

func errNotModified() error {
	return statusError(http.StatusNotModified, "ConditionNotMet",
		"The condition specified using HTTP conditional header(s) is not met.")
}

func errConditionNotMet() error {
	return statusError(http.StatusPreconditionFailed, "ConditionNotMet",
		"The condition specified using HTTP conditional header(s) is not met.")
}

func errBlobNotFound() error {
	return statusError(http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
}

func errBlobExists() error {
	return statusError(http.StatusConflict, "BlobAlreadyExists", "The specified blob already exists.")
}

func errInvalidHeader(name string) error {
	return statusError(http.StatusBadRequest, "InvalidHeaderValue",
		"The value for one of the HTTP headers is not in the correct format. (Header: "+name+".)")
}

func errOutOfRange() error {
	return statusError(http.StatusBadRequest, "OutOfRangeInput",
		"One of the request inputs is out of range.")
}

// isStatus reports whether err is the service's error with status and code.
func isStatus(err error, status int, code string) bool {
	se, ok := err.(*abstractions.StatusError)
	return ok && se.StatusCode == status && se.ErrorCode == code
}
