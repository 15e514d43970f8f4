package emulator

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/service"
)

// xmlWriter writes the Blob service's XML bodies element by element, in the service's order.
type xmlWriter struct{ strings.Builder }

func (x *xmlWriter) raw(s string) { x.WriteString(s) }

// el writes <name>value</name>, value escaped.
func (x *xmlWriter) el(name, value string) {
	x.WriteString("<" + name + ">")
	_ = xml.EscapeText(x, []byte(value))
	x.WriteString("</" + name + ">")
}

// writeXML answers with status and the XML body.
func (q *blobRequest) writeXML(status int, body string) {
	hdr := q.w.Header()
	hdr.Set("Content-Type", "application/xml")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write([]byte(body))
	}
}

// maxResults reads the maxresults parameter: 0 when absent; one that is not a number fails
// with 400 InvalidQueryParameterValue, one below 1 with 400 OutOfRangeInput.
func (q *blobRequest) maxResults() (int, error) {
	v := q.query.Get("maxresults")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errBadQueryValue("maxresults")
	}
	if n < 1 {
		return 0, errOutOfRange()
	}
	return min(n, 5000), nil
}

// includes reads the include parameter; uncommitted blobs are the only value that would
// list something the emulator does not, the others (snapshots, versions, deleted blobs,
// copies, tags) naming what it never holds.
func (q *blobRequest) includes() (map[string]bool, error) {
	inc := map[string]bool{}
	for _, v := range q.query["include"] {
		for _, s := range strings.Split(v, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if s == "uncommittedblobs" {
				return nil, errNotImplemented("listing uncommitted blobs")
			}
			inc[s] = true
		}
	}
	return inc, nil
}

// serviceEndpoint is the ServiceEndpoint attribute of a listing: the account's URL.
func (q *blobRequest) serviceEndpoint() string {
	scheme := "http"
	if q.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + q.r.Host + "/" + q.acct.name + "/"
}

func (q *blobRequest) listContainers() {
	limit, err := q.maxResults()
	if err != nil {
		q.fail(err)
		return
	}
	if _, err := q.includes(); err != nil {
		q.fail(err)
		return
	}
	if limit == 0 {
		limit = 5000
	}
	prefix, marker := q.query.Get("prefix"), q.query.Get("marker")
	all, err := q.acct.svc.Containers(q.r.Context(), prefix)
	if err != nil {
		q.fail(err)
		return
	}
	i, _ := slices.BinarySearchFunc(all, marker, func(c memservice.ContainerProperties, m string) int { return strings.Compare(c.Name, m) })
	page, next := all[i:], ""
	if len(page) > limit {
		next = page[limit].Name
		page = page[:limit]
	}
	var x xmlWriter
	x.raw(xmlHeader + `<EnumerationResults ServiceEndpoint="`)
	_ = xml.EscapeText(&x, []byte(q.serviceEndpoint()))
	x.raw(`">`)
	q.listParams(&x, "prefix", "Prefix", "marker", "Marker", "maxresults", "MaxResults")
	x.raw("<Containers>")
	for _, c := range page {
		x.raw("<Container>")
		x.el("Name", c.Name)
		x.raw("<Properties>")
		x.el("Last-Modified", c.LastModified.UTC().Format(http.TimeFormat))
		x.el("Etag", c.ETag)
		x.el("LeaseStatus", "unlocked")
		x.el("LeaseState", "available")
		x.el("HasImmutabilityPolicy", "false")
		x.el("HasLegalHold", "false")
		x.raw("</Properties>")
		x.raw("</Container>")
	}
	x.raw("</Containers>")
	x.el("NextMarker", next)
	x.raw("</EnumerationResults>")
	q.writeXML(http.StatusOK, x.String())
}

// listParams writes the elements that echo the listing's parameters, for those given:
// pairs of parameter and element names.
func (q *blobRequest) listParams(x *xmlWriter, pairs ...string) {
	for i := 0; i < len(pairs); i += 2 {
		if q.query.Has(pairs[i]) {
			x.el(pairs[i+1], q.query.Get(pairs[i]))
		}
	}
}

func (q *blobRequest) listBlobs(container string) {
	limit, err := q.maxResults()
	if err != nil {
		q.fail(err)
		return
	}
	inc, err := q.includes()
	if err != nil {
		q.fail(err)
		return
	}
	opts := service.ListOptions{
		Prefix:     q.query.Get("prefix"),
		Delimiter:  q.query.Get("delimiter"),
		Marker:     q.query.Get("marker"),
		MaxResults: limit,
	}
	type listed struct {
		item     service.BlobItem
		side     *sideProps
		metadata map[string]string
	}
	q.st.mu.RLock()
	page, err := q.acct.svc.List(q.r.Context(), container, opts)
	var blobs []listed
	if err == nil {
		for _, it := range page.Blobs {
			l := listed{item: it, side: q.st.sideOf(blobKey{container, it.Name}, it.Properties)}
			if inc["metadata"] {
				if b, lerr := q.load(container, it.Name); lerr == nil && b != nil {
					l.metadata = b.metadata
				}
			}
			blobs = append(blobs, l)
		}
	}
	q.st.mu.RUnlock()
	if err != nil {
		q.fail(err)
		return
	}
	var x xmlWriter
	x.raw(xmlHeader + `<EnumerationResults ServiceEndpoint="`)
	_ = xml.EscapeText(&x, []byte(q.serviceEndpoint()))
	x.raw(`" ContainerName="`)
	_ = xml.EscapeText(&x, []byte(container))
	x.raw(`">`)
	q.listParams(&x, "prefix", "Prefix", "marker", "Marker", "maxresults", "MaxResults", "delimiter", "Delimiter")
	x.raw("<Blobs>")
	// Blobs and prefixes in name order, as the service interleaves them.
	bi, pi := 0, 0
	for bi < len(blobs) || pi < len(page.Prefixes) {
		if pi < len(page.Prefixes) && (bi == len(blobs) || service.CompareUTF16(page.Prefixes[pi], blobs[bi].item.Name) < 0) {
			x.raw("<BlobPrefix>")
			x.el("Name", page.Prefixes[pi])
			x.raw("</BlobPrefix>")
			pi++
			continue
		}
		writeBlobItem(&x, blobs[bi].item, blobs[bi].side, blobs[bi].metadata, inc["metadata"])
		bi++
	}
	x.raw("</Blobs>")
	x.el("NextMarker", page.NextMarker)
	x.raw("</EnumerationResults>")
	q.writeXML(http.StatusOK, x.String())
}

func writeBlobItem(x *xmlWriter, it service.BlobItem, side *sideProps, md map[string]string, withMetadata bool) {
	p := it.Properties
	x.raw("<Blob>")
	x.el("Name", it.Name)
	x.raw("<Properties>")
	x.el("Last-Modified", p.LastModified.UTC().Format(http.TimeFormat))
	x.el("Etag", strings.Trim(p.ETag, `"`))
	x.el("Content-Length", strconv.FormatInt(p.ContentLength, 10))
	x.el("Content-Type", p.ContentType)
	x.el("Content-Encoding", p.ContentEncoding)
	x.el("Content-Language", side.contentLanguage)
	x.el("Content-MD5", side.contentMD5)
	x.el("Cache-Control", side.cacheControl)
	x.el("Content-Disposition", side.contentDisposition)
	x.el("BlobType", "BlockBlob")
	x.el("LeaseStatus", "unlocked")
	x.el("LeaseState", "available")
	x.el("ServerEncrypted", "true")
	x.raw("</Properties>")
	if withMetadata {
		names := make([]string, 0, len(md))
		for n := range md {
			names = append(names, n)
		}
		slices.Sort(names)
		x.raw("<Metadata>")
		for _, n := range names {
			x.el(n, md[n])
		}
		x.raw("</Metadata>")
	}
	x.raw("</Blob>")
}
