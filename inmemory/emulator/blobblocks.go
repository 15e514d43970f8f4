package emulator

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strconv"
)

// Staged blocks: Put Block keeps a block beside the blob until a Put Block List commits it;
// committing, Put Blob or Delete Blob of the blob, and deleting its container discard them.

// The service's limits on blocks.
const (
	maxBlockIDLen     = 64      // bytes of a decoded block id
	maxStagedBlocks   = 100_000 // uncommitted blocks of one blob
	maxCommitedBlocks = 50_000  // blocks of one block list
)

// stagedBlocks are the uncommitted blocks of one blob.
type stagedBlocks struct {
	idLen  int               // the decoded length of every block id of the blob
	blocks map[string][]byte // by block id, as the query gives it
	order  []string          // the ids in the order they were first staged
}

func errInvalidBlock() error {
	return statusError(http.StatusBadRequest, "InvalidBlobOrBlock", "The specified blob or block content is invalid.")
}

func errInvalidBlockList() error {
	return statusError(http.StatusBadRequest, "InvalidBlockList", "The specified block list is invalid.")
}

func errMissingQuery(name string) error {
	return statusError(http.StatusBadRequest, "MissingRequiredQueryParameter",
		"A query parameter that's mandatory for this request is not specified. (Parameter: "+name+".)")
}

func (q *blobRequest) putBlock(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	id := q.query.Get("blockid")
	if !q.query.Has("blockid") {
		q.fail(errMissingQuery("blockid"))
		return
	}
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil || len(raw) > maxBlockIDLen || id == "" {
		q.fail(errBadQueryValue("blockid"))
		return
	}
	if err := q.readBody(); err != nil {
		q.fail(err)
		return
	}
	k := blobKey{container, name}
	// The container is looked up under the lock Delete Container holds, so that no block
	// is staged for a container deleted meanwhile.
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	if _, err := q.acct.svc.Container(q.r.Context(), container); err != nil {
		q.fail(err)
		return
	}
	s := q.st.staged[k]
	switch {
	case s == nil:
		s = &stagedBlocks{idLen: len(raw), blocks: make(map[string][]byte)}
	case s.idLen != len(raw):
		q.fail(errInvalidBlock())
		return
	}
	if _, ok := s.blocks[id]; !ok {
		if len(s.order) >= maxStagedBlocks {
			q.fail(statusError(http.StatusConflict, "BlockCountExceedsLimit",
				"The uncommitted block count cannot exceed the maximum limit of 100,000 blocks."))
			return
		}
		s.order = append(s.order, id)
	}
	s.blocks[id] = q.body
	q.st.staged[k] = s
	if err := q.acct.stage(container, name, id, q.body); err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("Content-MD5", md5Of(q.body))
	q.w.Header().Set("x-ms-request-server-encrypted", "true")
	q.w.WriteHeader(http.StatusCreated)
}

// blockListBody is the body of Put Block List: Committed, Uncommitted and Latest elements in
// the order the blob's blocks take.
type blockListBody struct {
	XMLName xml.Name   `xml:"BlockList"`
	Items   []blockRef `xml:",any"`
}

type blockRef struct {
	XMLName xml.Name
	ID      string `xml:",chardata"`
}

func (q *blobRequest) putBlockList(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	if err := q.readBody(); err != nil {
		q.fail(err)
		return
	}
	var list blockListBody
	if err := xml.Unmarshal(q.body, &list); err != nil {
		q.fail(statusError(http.StatusBadRequest, "InvalidXmlDocument", "XML specified is not syntactically valid."))
		return
	}
	if len(list.Items) > maxCommitedBlocks {
		q.fail(errInvalidBlockList())
		return
	}
	opts, side := q.blobHeaders(false)
	opts.Metadata = q.metadata()
	cond := q.conditions()
	k := blobKey{container, name}
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	cur, err := q.load(container, name)
	if err != nil {
		q.fail(err)
		return
	}
	if err := cond.check(cur.propsOrNil(), condCreate); err != nil {
		q.fail(err)
		return
	}
	var committed map[string][]byte
	if cur != nil {
		committed = committedData(cur, q.st.sideOf(k, cur.props))
	}
	staged := q.st.staged[k]
	var data bytes.Buffer
	side.blocks = []committedBlock{}
	for _, it := range list.Items {
		var (
			b  []byte
			ok bool
		)
		switch it.XMLName.Local {
		case "Committed":
			b, ok = committed[it.ID]
		case "Uncommitted":
			if staged != nil {
				b, ok = staged.blocks[it.ID]
			}
		case "Latest":
			if staged != nil {
				b, ok = staged.blocks[it.ID]
			}
			if !ok {
				b, ok = committed[it.ID]
			}
		default:
			q.fail(errInvalidBlockList())
			return
		}
		if !ok {
			q.fail(errInvalidBlockList())
			return
		}
		data.Write(b)
		side.blocks = append(side.blocks, committedBlock{id: it.ID, size: int64(len(b))})
	}
	p, err := q.write(container, name, cur, cond, condCreate, data.Bytes(), opts, side)
	if err != nil {
		q.fail(err)
		return
	}
	delete(q.st.staged, k)
	q.stamp(p.ETag, p.LastModified)
	q.w.Header().Set("x-ms-request-server-encrypted", "true")
	q.w.WriteHeader(http.StatusCreated)
}

func (q *blobRequest) getBlockList(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	which := q.query.Get("blocklisttype")
	switch which {
	case "":
		which = "committed"
	case "committed", "uncommitted", "all":
	default:
		q.fail(errBadQueryValue("blocklisttype"))
		return
	}
	k := blobKey{container, name}
	q.st.mu.RLock()
	cur, err := q.load(container, name)
	var side *sideProps
	if cur != nil {
		side = q.st.sideOf(k, cur.props)
	}
	var staged []committedBlock
	if s := q.st.staged[k]; s != nil {
		for _, id := range s.order {
			staged = append(staged, committedBlock{id: id, size: int64(len(s.blocks[id]))})
		}
	}
	q.st.mu.RUnlock()
	if err != nil {
		q.fail(err)
		return
	}
	if cur == nil && staged == nil {
		q.fail(errBlobNotFound())
		return
	}
	var x xmlWriter
	x.raw(xmlHeader + "<BlockList>")
	writeBlocks := func(elem string, blocks []committedBlock) {
		x.raw("<" + elem + ">")
		for _, b := range blocks {
			x.raw("<Block>")
			x.el("Name", b.id)
			x.el("Size", strconv.FormatInt(b.size, 10))
			x.raw("</Block>")
		}
		x.raw("</" + elem + ">")
	}
	if which != "uncommitted" {
		var blocks []committedBlock
		if side != nil {
			blocks = side.blocks
		}
		writeBlocks("CommittedBlocks", blocks)
	}
	if which != "committed" {
		writeBlocks("UncommittedBlocks", staged)
	}
	x.raw("</BlockList>")
	hdr := q.w.Header()
	if cur != nil {
		q.stamp(cur.props.ETag, cur.props.LastModified)
		hdr.Set("x-ms-blob-content-length", strconv.Itoa(len(cur.data)))
	}
	q.writeXML(http.StatusOK, x.String())
}
