package fidelity

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// The blob matrix: one sequence of calls of the Azure SDK's blob client (azblob) run against
// the emulator's blob endpoint (started in this process) and against Azurite's, recorded
// and compared as the table matrix is (TestEmulatorMatrix): statuses and error codes of the
// failures, and the properties, contents and listings of the successes, with ETags and
// times taken out.

// emulatorBlobEndpoint starts the emulator in process and returns its development
// account's blob endpoint.
func emulatorBlobEndpoint(t testing.TB) string {
	t.Helper()
	h, err := emulator.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Blobs())
	t.Cleanup(srv.Close)
	return srv.URL + "/" + emulator.DevelopmentAccount
}

// azuriteBlobEndpoint returns the blob endpoint of the Azurite the environment names, or ""
// (as azuriteEndpoint for tables).
func azuriteBlobEndpoint(t testing.TB) string {
	t.Helper()
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		return ""
	}
	kv := map[string]string{}
	for _, part := range strings.Split(conn, ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			kv[k] = v
		}
	}
	switch {
	case kv["UseDevelopmentStorage"] == "true":
		return "http://127.0.0.1:10000/" + emulator.DevelopmentAccount
	case kv["AccountName"] != emulator.DevelopmentAccount || kv["AccountKey"] != emulator.DevelopmentKey:
		t.Logf("%s names another account than the development account", azuritetest.ConnEnv)
		return ""
	case kv["BlobEndpoint"] == "":
		t.Fatalf("%s names no BlobEndpoint", azuritetest.ConnEnv)
	}
	return kv["BlobEndpoint"]
}

func TestEmulatorBlobMatrix(t *testing.T) {
	name := "ebx" + randomSuffix()
	emu := runBlobMatrix(t, emulatorBlobEndpoint(t), name)
	checkBlobMatrix(t, "emulator", emu)
	az := azuriteBlobEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the blob matrix ran on the emulator only")
		return
	}
	azr := runBlobMatrix(t, az, name)
	checkBlobMatrix(t, "azurite", azr)
	for i := range azr {
		if _, ok := blobMatrixDeviations[azr[i].Step]; ok {
			azr[i].Err, azr[i].Value = "", nil
			if i < len(emu) {
				emu[i].Err, emu[i].Value = "", nil
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers the blob matrix otherwise than Azurite (-azurite +emulator):\n%s", diff)
	}
}

// blobMatrixDeviations are the steps where Azurite differs from the service: the deviation
// in Deviations, and Azurite's answer.
var blobMatrixDeviations = map[string]struct{ deviation, azurite string }{
	"download a missing blob with If-Match":  {"blob-conditional-missing", "412 ConditionNotMet"},
	"upload a missing blob with If-Match: *": {"blob-ifmatch-any-missing", ""},
	"a bad signature":                        {"bad-signature-code", "403 AuthorizationFailure"},
	"upload with a wrong Content-MD5":        {"blob-md5-mismatch-code", "400 InvalidOperation"},
}

// checkBlobMatrix checks the outcomes the service documents, on each side.
func checkBlobMatrix(t *testing.T, side string, obs []observation) {
	t.Helper()
	want := map[string]string{
		"create container":                            "",
		"create container again":                      "409 ContainerAlreadyExists",
		"create a container with a bad name":          "400 InvalidResourceName",
		"properties of a missing container":           "404 ContainerNotFound",
		"upload":                                      "",
		"upload with If-None-Match: * over a blob":    "409 BlobAlreadyExists",
		"upload with a stale If-Match":                "412 ConditionNotMet",
		"upload with the current If-Match":            "",
		"upload a missing blob with If-Match: *":      "412 ConditionNotMet",
		"upload into a missing container":             "404 ContainerNotFound",
		"upload with a metadata name that is invalid": "400 InvalidMetadata",
		"download a range past the end":               "416 InvalidRange",
		"download with a stale If-Match":              "412 ConditionNotMet",
		"download with the current If-None-Match":     "304 ConditionNotMet",
		"download modified since the future":          "304 ConditionNotMet",
		"download unmodified since the past":          "412 ConditionNotMet",
		"download a missing blob":                     "404 BlobNotFound",
		"download a missing blob with If-Match":       "404 BlobNotFound",
		"commit a block that was never staged":        "400 InvalidBlockList",
		"block list of a missing blob":                "404 BlobNotFound",
		"delete with a stale If-Match":                "412 ConditionNotMet",
		"delete":                                      "",
		"delete again":                                "404 BlobNotFound",
		"a bad signature":                             "403 AuthenticationFailed",
		"delete container":                            "",
		"delete container again":                      "404 ContainerNotFound",
		"stage a block id of another length":          "400 InvalidBlobOrBlock",
		"commit over a blob with If-None-Match: *":    "409 BlobAlreadyExists",
		"download a range of an empty blob":           "416 InvalidRange",
		"upload with a wrong Content-MD5":             "400 Md5Mismatch",
		"set metadata of a missing blob":              "404 BlobNotFound",
		"properties of a missing blob":                "404 BlobNotFound",
		"download a blob with only staged blocks":     "404 BlobNotFound",
	}
	for _, o := range obs {
		w, ok := want[o.Step]
		if d, dev := blobMatrixDeviations[o.Step]; dev && side == "azurite" {
			if _, listed := Deviations[d.deviation]; !listed {
				t.Errorf("step %s names deviation %q, which Deviations does not list", o.Step, d.deviation)
			}
			w, ok = d.azurite, true
		}
		if ok && o.Err != w {
			t.Errorf("%s: %s: got %q, want %q", side, o.Step, o.Err, w)
		}
	}
}

// blobValue is what a read of a blob's properties returns, without ETag and times.
type blobValue struct {
	ContentType, ContentEncoding, ContentLanguage, CacheControl, ContentDisposition string
	ContentLength                                                                   int64
	ContentMD5                                                                      string
	BlobType                                                                        string
	Metadata                                                                        map[string]string
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func propsValue(p blob.GetPropertiesResponse) blobValue {
	v := blobValue{
		ContentType: str(p.ContentType), ContentEncoding: str(p.ContentEncoding),
		ContentLanguage: str(p.ContentLanguage), CacheControl: str(p.CacheControl),
		ContentDisposition: str(p.ContentDisposition), ContentMD5: base64.StdEncoding.EncodeToString(p.ContentMD5),
		Metadata: map[string]string{},
	}
	if p.ContentLength != nil {
		v.ContentLength = *p.ContentLength
	}
	if p.BlobType != nil {
		v.BlobType = string(*p.BlobType)
	}
	for k, val := range p.Metadata {
		v.Metadata[strings.ToLower(k)] = str(val)
	}
	return v
}

// blobMatrixClient returns a client of endpoint's development account, signing with key.
func blobMatrixClient(t testing.TB, endpoint, key string) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(emulator.DevelopmentAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(endpoint, cred, &azblob.ClientOptions{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runBlobMatrix runs the calls on one service.
func runBlobMatrix(t *testing.T, endpoint, name string) []observation {
	t.Helper()
	ctx := context.Background()
	c := blobMatrixClient(t, endpoint, emulator.DevelopmentKey)
	sc := c.ServiceClient()
	cc := sc.NewContainerClient(name)
	t.Cleanup(func() { _, _ = cc.Delete(context.Background(), nil) })
	var obs []observation
	record := func(step string, v any, err error) {
		obs = append(obs, observation{Step: step, Err: errText(err), Value: v})
	}
	bb := func(n string) *blockblob.Client { return cc.NewBlockBlobClient(n) }
	props := func(step, n string) blob.GetPropertiesResponse {
		p, err := bb(n).GetProperties(ctx, nil)
		if err != nil {
			record(step, nil, err)
			return p
		}
		record(step, propsValue(p), nil)
		return p
	}
	download := func(step, n string, opts *blob.DownloadStreamOptions) {
		r, err := bb(n).DownloadStream(ctx, opts)
		if err != nil {
			record(step, nil, err)
			return
		}
		if r.Body == nil {
			// The SDK takes 304 Not Modified for a success without a body.
			obs = append(obs, observation{Step: step, Err: "304 " + str(r.ErrorCode)})
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		record(step, []string{string(body), str(r.ContentRange)}, err)
	}

	_, err := cc.Create(ctx, nil)
	record("create container", nil, err)
	_, err = cc.Create(ctx, nil)
	record("create container again", nil, err)
	_, err = sc.NewContainerClient("Bad_Name").Create(ctx, nil)
	record("create a container with a bad name", nil, err)
	_, err = cc.GetProperties(ctx, nil)
	record("container properties", nil, err)
	_, err = sc.NewContainerClient(name+"x").GetProperties(ctx, nil)
	record("properties of a missing container", nil, err)

	content := []byte("hello, world")
	_, err = bb("a/one.txt").Upload(ctx, streamOf(content), &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{
			BlobContentType: to.Ptr("text/plain"), BlobContentLanguage: to.Ptr("en"),
			BlobCacheControl: to.Ptr("no-cache"), BlobContentDisposition: to.Ptr("inline"),
		},
		Metadata: map[string]*string{"color": to.Ptr("blue")},
	})
	record("upload", nil, err)
	cur := props("properties", "a/one.txt")
	download("download", "a/one.txt", nil)
	download("download a range", "a/one.txt", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7, Count: 5}})
	download("download from an offset", "a/one.txt", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7}})
	download("download a range past its end", "a/one.txt", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 10, Count: 100}})
	download("download a range past the end", "a/one.txt", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 100, Count: 5}})
	stale := azcore.ETag(`"0x8D000000000000F"`)
	download("download with a stale If-Match", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}})
	download("download with the current If-Match", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: cur.ETag}}})
	download("download with the current If-None-Match", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: cur.ETag}}})
	future, past := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	download("download modified since the future", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &future}}})
	download("download modified since the past", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &past}}})
	download("download unmodified since the past", "a/one.txt", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: &past}}})
	download("download a missing blob", "nope", nil)
	download("download a missing blob with If-Match", "nope", &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}})

	upload := func(step, n string, data string, mac *blob.ModifiedAccessConditions) {
		_, err := bb(n).Upload(ctx, streamOf([]byte(data)), &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac}})
		record(step, nil, err)
	}
	upload("upload with If-None-Match: * over a blob", "a/one.txt", "x", &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)})
	upload("upload with a stale If-Match", "a/one.txt", "x", &blob.ModifiedAccessConditions{IfMatch: &stale})
	upload("upload with the current If-Match", "a/one.txt", "hello, again", &blob.ModifiedAccessConditions{IfMatch: cur.ETag})
	props("properties after a conditional upload", "a/one.txt")
	upload("upload a missing blob with If-Match: *", "a/missing", "x", &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETagAny)})
	// Azurite creates it (the deviation): gone again, the listings below compare.
	_, _ = bb("a/missing").Delete(ctx, nil)
	_, err = sc.NewContainerClient(name+"x").NewBlockBlobClient("b").Upload(ctx, streamOf(content), nil)
	record("upload into a missing container", nil, err)
	_, err = bb("a/bad").Upload(ctx, streamOf(content), &blockblob.UploadOptions{Metadata: map[string]*string{"1bad": to.Ptr("x")}})
	record("upload with a metadata name that is invalid", nil, err)

	_, err = bb("a/one.txt").SetMetadata(ctx, map[string]*string{"shape": to.Ptr("round"), "size": to.Ptr("9")}, nil)
	record("set metadata", nil, err)
	props("properties after set metadata", "a/one.txt")
	_, err = bb("a/one.txt").SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/csv"), BlobContentLanguage: to.Ptr("nb")}, nil)
	record("set HTTP headers", nil, err)
	props("properties after set HTTP headers", "a/one.txt")

	// Blocks: staged, committed, listed, committed again from the committed list.
	id := func(i int) string { return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("block-%03d", i))) }
	for i, part := range []string{"aaa", "bb", "c"} {
		_, err := bb("b/blocks").StageBlock(ctx, id(i), streamOf([]byte(part)), nil)
		record(fmt.Sprintf("stage block %d", i), nil, err)
	}
	blockList := func(step, n string, which blockblob.BlockListType) {
		l, err := bb(n).GetBlockList(ctx, which, nil)
		if err != nil {
			record(step, nil, err)
			return
		}
		var v []string
		for _, b := range l.CommittedBlocks {
			v = append(v, fmt.Sprintf("committed %s %d", *b.Name, *b.Size))
		}
		for _, b := range l.UncommittedBlocks {
			v = append(v, fmt.Sprintf("uncommitted %s %d", *b.Name, *b.Size))
		}
		record(step, v, nil)
	}
	blockList("block list before commit", "b/blocks", blockblob.BlockListTypeAll)
	_, err = bb("b/blocks").CommitBlockList(ctx, []string{id(0), id(2)}, &blockblob.CommitBlockListOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")},
		Metadata:    map[string]*string{"kind": to.Ptr("blocks")},
	})
	record("commit blocks", nil, err)
	download("download the committed blocks", "b/blocks", nil)
	props("properties of the committed blocks", "b/blocks")
	blockList("block list after commit", "b/blocks", blockblob.BlockListTypeAll)
	_, err = bb("b/blocks").CommitBlockList(ctx, []string{id(7)}, nil)
	record("commit a block that was never staged", nil, err)
	_, err = bb("b/blocks").StageBlock(ctx, id(3), streamOf([]byte("dddd")), nil)
	record("stage block 3", nil, err)
	_, err = bb("b/blocks").CommitBlockList(ctx, []string{id(2), id(3), id(0)}, nil)
	record("commit committed and staged blocks", nil, err)
	download("download the second commit", "b/blocks", nil)
	blockList("committed block list", "b/blocks", blockblob.BlockListTypeCommitted)
	blockList("block list of a blob put whole", "a/one.txt", blockblob.BlockListTypeAll)
	blockList("block list of a missing blob", "b/nope", blockblob.BlockListTypeAll)

	// More edges: staged blocks of a blob that does not exist yet, ids of another length, a
	// block list over a blob with If-None-Match: *, an empty blob read by range, a wrong
	// Content-MD5, metadata of a missing blob, a HEAD of a missing blob.
	_, err = bb("b/staged").StageBlock(ctx, id(0), streamOf([]byte("s")), nil)
	record("stage a block of a new blob", nil, err)
	blockList("uncommitted block list of a new blob", "b/staged", blockblob.BlockListTypeUncommitted)
	download("download a blob with only staged blocks", "b/staged", nil)
	_, err = bb("b/staged").StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("short")), streamOf([]byte("s")), nil)
	record("stage a block id of another length", nil, err)
	_, err = bb("b/blocks").CommitBlockList(ctx, []string{}, &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	record("commit over a blob with If-None-Match: *", nil, err)
	_, err = bb("b/empty").Upload(ctx, streamOf(nil), nil)
	record("upload an empty blob", nil, err)
	download("download a range of an empty blob", "b/empty", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 0, Count: 5}})
	download("download an empty blob", "b/empty", nil)
	_, err = bb("b/md5").Upload(ctx, streamOf(content), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5([]byte("0123456789abcdef"))})
	record("upload with a wrong Content-MD5", nil, err)
	_, err = bb("b/nope").SetMetadata(ctx, map[string]*string{"a": to.Ptr("1")}, nil)
	record("set metadata of a missing blob", nil, err)
	_, err = bb("b/nope").GetProperties(ctx, nil)
	record("properties of a missing blob", nil, err)
	// Names that need escaping in the path and in the string to sign.
	odd := "odd dir/ü+%&=?#.txt"
	_, err = bb(odd).Upload(ctx, streamOf([]byte("odd")), nil)
	record("upload a name to escape", nil, err)
	download("download a name to escape", odd, nil)
	// The SDK's parallel uploads and downloads: blocks of 1 KiB, four at a time.
	big := bytes.Repeat([]byte("0123456789abcdef"), 640) // 10 KiB
	_, err = cc.NewBlockBlobClient("b/big").UploadBuffer(ctx, big, &blockblob.UploadBufferOptions{BlockSize: 1024, Concurrency: 4})
	record("upload in blocks", nil, err)
	buf := make([]byte, len(big))
	n, err := cc.NewBlobClient("b/big").DownloadBuffer(ctx, buf, &blob.DownloadBufferOptions{BlockSize: 1000, Concurrency: 4})
	record("download in ranges", []any{n, bytes.Equal(buf, big)}, err)
	l, err := bb("b/big").GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
	record("block count of the upload in blocks", len(l.CommittedBlocks), err)

	// Listings.
	for _, n := range []string{"a/two.txt", "a/sub/three.txt", "c.txt"} {
		if _, err := bb(n).Upload(ctx, streamOf([]byte(n)), &blockblob.UploadOptions{Metadata: map[string]*string{"n": to.Ptr("1")}}); err != nil {
			t.Fatalf("upload %s: %v", n, err)
		}
	}
	var pages [][]string
	for p := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("a/"), MaxResults: to.Ptr(int32(2))}); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			record("list blobs flat", nil, err)
			break
		}
		var names []string
		for _, b := range page.Segment.BlobItems {
			names = append(names, fmt.Sprintf("%s %d %s md5=%t", *b.Name, *b.Properties.ContentLength, str(b.Properties.ContentType), len(b.Properties.ContentMD5) > 0))
		}
		pages = append(pages, names)
	}
	record("list blobs flat", pages, nil)
	var tree []string
	for p := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("a/")}); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			record("list blobs by directory", nil, err)
			break
		}
		for _, b := range page.Segment.BlobItems {
			tree = append(tree, "blob "+*b.Name)
		}
		for _, pr := range page.Segment.BlobPrefixes {
			tree = append(tree, "prefix "+*pr.Name)
		}
	}
	record("list blobs by directory", tree, nil)
	var withMD []string
	for p := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}}); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			record("list blobs with metadata", nil, err)
			break
		}
		for _, b := range page.Segment.BlobItems {
			var md []string
			for k, v := range b.Metadata {
				md = append(md, strings.ToLower(k)+"="+str(v))
			}
			slices.Sort(md)
			withMD = append(withMD, *b.Name+" "+strings.Join(md, ","))
		}
	}
	record("list blobs with metadata", withMD, nil)
	var containers []string
	for p := sc.NewListContainersPager(&azblob.ListContainersOptions{Prefix: to.Ptr(name)}); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			record("list containers", nil, err)
			break
		}
		for _, ci := range page.ContainerItems {
			containers = append(containers, *ci.Name)
		}
	}
	record("list containers", containers, nil)

	// Deletes.
	_, err = bb("c.txt").Delete(ctx, &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}})
	record("delete with a stale If-Match", nil, err)
	_, err = bb("c.txt").Delete(ctx, nil)
	record("delete", nil, err)
	_, err = bb("c.txt").Delete(ctx, nil)
	record("delete again", nil, err)
	_, err = blobMatrixClient(t, endpoint, base64.StdEncoding.EncodeToString([]byte("not the key"))).
		ServiceClient().NewContainerClient(name).NewBlobClient("a/one.txt").GetProperties(ctx, nil)
	record("a bad signature", nil, err)
	_, err = cc.Delete(ctx, nil)
	record("delete container", nil, err)
	_, err = cc.Delete(ctx, nil)
	record("delete container again", nil, err)
	return obs
}

// streamOf returns data as the SDK's upload body.
func streamOf(data []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(data)) }

// The blob SAS matrix: service SAS (of a container, of a blob) and account SAS made by the
// SDK's signer (sas.BlobSignatureValues, sas.AccountSignatureValues), used by the SDK's
// clients on both services, and compared as the blob matrix is.
func TestEmulatorBlobSASMatrix(t *testing.T) {
	name := "ebs" + randomSuffix()
	emu := runBlobSASMatrix(t, emulatorBlobEndpoint(t), name)
	checkBlobSASMatrix(t, "emulator", emu)
	az := azuriteBlobEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the blob SAS matrix ran on the emulator only")
		return
	}
	azr := runBlobSASMatrix(t, az, name)
	checkBlobSASMatrix(t, "azurite", azr)
	for i := range azr {
		if _, ok := blobSASDeviations[azr[i].Step]; ok {
			azr[i].Err, azr[i].Value = "", nil
			if i < len(emu) {
				emu[i].Err, emu[i].Value = "", nil
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers the blob SAS matrix otherwise than Azurite (-azurite +emulator):\n%s", diff)
	}
}

// blobSASDeviations are the SAS steps where Azurite differs from the service.
var blobSASDeviations = map[string]struct{ deviation, azurite string }{
	"container SAS: another container": {"bad-signature-code", "403 AuthorizationFailure"},
	"container SAS: expired":           {"sas-token-code", "403 AuthorizationFailure"},
	"container SAS: bad signature":     {"bad-signature-code", "403 AuthorizationFailure"},
	"blob SAS: another blob":           {"bad-signature-code", "403 AuthorizationFailure"},
	"blob SAS: list blobs":             {"bad-signature-code", "403 AuthorizationFailure"},
}

func checkBlobSASMatrix(t *testing.T, side string, obs []observation) {
	t.Helper()
	want := map[string]string{
		"container SAS: list blobs":                      "",
		"container SAS: download":                        "",
		"container SAS: upload without w":                "403 AuthorizationPermissionMismatch",
		"container SAS: delete without d":                "403 AuthorizationPermissionMismatch",
		"container SAS: container properties":            "403 AuthorizationPermissionMismatch",
		"container SAS: upload":                          "",
		"container SAS: another container":               "403 AuthenticationFailed",
		"container SAS: expired":                         "403 AuthenticationFailed",
		"container SAS: bad signature":                   "403 AuthenticationFailed",
		"blob SAS: create a new blob with c":             "",
		"blob SAS: overwrite with c":                     "403 AuthorizationPermissionMismatch",
		"blob SAS: another blob":                         "403 AuthenticationFailed",
		"blob SAS: properties with response headers set": "",
		"blob SAS: list blobs":                           "403 AuthenticationFailed",
		"account SAS: create container":                  "",
		"account SAS: list containers":                   "",
		"account SAS: upload":                            "",
		"account SAS: download":                          "",
		"account SAS: list containers without s":         "403 AuthorizationResourceTypeMismatch",
		"account SAS: delete without d":                  "403 AuthorizationPermissionMismatch",
		"account SAS: https only over http":              "403 AuthorizationProtocolMismatch",
		"account SAS: delete container":                  "",
	}
	for _, o := range obs {
		w, ok := want[o.Step]
		if !ok {
			t.Errorf("%s: step %q has no expectation", side, o.Step)
			continue
		}
		if d, dev := blobSASDeviations[o.Step]; dev && side == "azurite" {
			if _, listed := Deviations[d.deviation]; !listed {
				t.Errorf("step %s names deviation %q, which Deviations does not list", o.Step, d.deviation)
			}
			w = d.azurite
		}
		if o.Err != w {
			t.Errorf("%s: %s: got %q, want %q", side, o.Step, o.Err, w)
		}
	}
}

// runBlobSASMatrix runs the SAS calls on one service: the container and its first blobs are
// made with Shared Key, everything else is authorized by a SAS.
func runBlobSASMatrix(t *testing.T, endpoint, name string) []observation {
	t.Helper()
	ctx := context.Background()
	sk := blobMatrixClient(t, endpoint, emulator.DevelopmentKey).ServiceClient()
	t.Cleanup(func() {
		_, _ = sk.NewContainerClient(name).Delete(context.Background(), nil)
		_, _ = sk.NewContainerClient(name+"x").Delete(context.Background(), nil)
		_, _ = sk.NewContainerClient(name+"y").Delete(context.Background(), nil)
	})
	for _, c := range []string{name, name + "x"} {
		if _, err := sk.NewContainerClient(c).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sk.NewContainerClient(name).NewBlockBlobClient("one").Upload(ctx, streamOf([]byte("one")), nil); err != nil {
		t.Fatal(err)
	}
	cred, err := azblob.NewSharedKeyCredential(emulator.DevelopmentAccount, emulator.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	var obs []observation
	record := func(step string, v any, err error) {
		obs = append(obs, observation{Step: step, Err: errText(err), Value: v})
	}
	opts := azuritetest.ClientOptions(t)
	hour := time.Now().UTC().Add(time.Hour)
	// signed returns the query of a service SAS.
	signed := func(v sas.BlobSignatureValues) string {
		t.Helper()
		if v.Protocol == "" {
			v.Protocol = sas.ProtocolHTTPSandHTTP
		}
		qp, err := v.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		return qp.Encode()
	}
	containerClient := func(c, query string) *container.Client {
		t.Helper()
		cc, err := container.NewClientWithNoCredential(endpoint+"/"+c+"?"+query, &container.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	blobClient := func(c, b, query string) *blockblob.Client {
		t.Helper()
		bc, err := blockblob.NewClientWithNoCredential(endpoint+"/"+c+"/"+b+"?"+query, &blockblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		return bc
	}
	names := func(cc *container.Client) ([]string, error) {
		var out []string
		for p := cc.NewListBlobsFlatPager(nil); p.More(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, b := range page.Segment.BlobItems {
				out = append(out, *b.Name)
			}
		}
		return out, nil
	}
	read := func(bc *blockblob.Client) (string, error) {
		r, err := bc.DownloadStream(ctx, nil)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}

	rl := signed(sas.BlobSignatureValues{ContainerName: name, ExpiryTime: hour, Permissions: (&sas.ContainerPermissions{Read: true, List: true}).String()})
	ns, err := names(containerClient(name, rl))
	record("container SAS: list blobs", ns, err)
	s, err := read(blobClient(name, "one", rl))
	record("container SAS: download", s, err)
	_, err = blobClient(name, "two", rl).Upload(ctx, streamOf([]byte("two")), nil)
	record("container SAS: upload without w", nil, err)
	_, err = blobClient(name, "one", rl).Delete(ctx, nil)
	record("container SAS: delete without d", nil, err)
	_, err = containerClient(name, rl).GetProperties(ctx, nil)
	record("container SAS: container properties", nil, err)
	all := signed(sas.BlobSignatureValues{ContainerName: name, ExpiryTime: hour,
		Permissions: (&sas.ContainerPermissions{Read: true, Create: true, Write: true, Delete: true, List: true}).String()})
	_, err = blobClient(name, "two", all).Upload(ctx, streamOf([]byte("two")), nil)
	record("container SAS: upload", nil, err)
	_, err = names(containerClient(name+"x", all))
	record("container SAS: another container", nil, err)
	expired := signed(sas.BlobSignatureValues{ContainerName: name, ExpiryTime: time.Now().UTC().Add(-time.Minute),
		Permissions: (&sas.ContainerPermissions{Read: true, List: true}).String()})
	_, err = names(containerClient(name, expired))
	record("container SAS: expired", nil, err)
	_, err = names(containerClient(name, editQuery(t, "?"+rl, func(v url.Values) { v.Set("sig", "AAAA"+v.Get("sig")[4:]) })[1:]))
	record("container SAS: bad signature", nil, err)

	create := signed(sas.BlobSignatureValues{ContainerName: name, BlobName: "three", ExpiryTime: hour, Permissions: (&sas.BlobPermissions{Create: true}).String()})
	_, err = blobClient(name, "three", create).Upload(ctx, streamOf([]byte("three")), nil)
	record("blob SAS: create a new blob with c", nil, err)
	_, err = blobClient(name, "three", create).Upload(ctx, streamOf([]byte("3")), nil)
	record("blob SAS: overwrite with c", nil, err)
	readOne := signed(sas.BlobSignatureValues{ContainerName: name, BlobName: "one", ExpiryTime: hour, Permissions: (&sas.BlobPermissions{Read: true}).String(),
		ContentType: "text/x-override", CacheControl: "max-age=5"})
	_, err = read(blobClient(name, "two", readOne))
	record("blob SAS: another blob", nil, err)
	p, err := blobClient(name, "one", readOne).GetProperties(ctx, nil)
	record("blob SAS: properties with response headers set", []string{str(p.ContentType), str(p.CacheControl)}, err)
	_, err = names(containerClient(name, readOne))
	record("blob SAS: list blobs", nil, err)

	account := func(rt sas.AccountResourceTypes, perms sas.AccountPermissions, proto sas.Protocol) *azblob.Client {
		t.Helper()
		qp, err := sas.AccountSignatureValues{Protocol: proto, ExpiryTime: hour, Permissions: perms.String(), ResourceTypes: rt.String()}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azblob.NewClientWithNoCredential(endpoint+"/?"+qp.Encode(), &azblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sco := sas.AccountResourceTypes{Service: true, Container: true, Object: true}
	as := account(sco, sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Create: true}, sas.ProtocolHTTPSandHTTP)
	_, err = as.CreateContainer(ctx, name+"y", nil)
	record("account SAS: create container", nil, err)
	var cs []string
	for pg := as.NewListContainersPager(&azblob.ListContainersOptions{Prefix: to.Ptr(name)}); pg.More(); {
		page, err := pg.NextPage(ctx)
		if err != nil {
			record("account SAS: list containers", nil, err)
			break
		}
		for _, ci := range page.ContainerItems {
			cs = append(cs, *ci.Name)
		}
	}
	record("account SAS: list containers", cs, nil)
	_, err = as.UploadBuffer(ctx, name+"y", "b", []byte("account"), nil)
	record("account SAS: upload", nil, err)
	r, err := as.DownloadStream(ctx, name+"y", "b", nil)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
	}
	record("account SAS: download", string(body), err)
	_, err = account(sas.AccountResourceTypes{Container: true, Object: true}, sas.AccountPermissions{Read: true, List: true}, sas.ProtocolHTTPSandHTTP).
		NewListContainersPager(nil).NextPage(ctx)
	record("account SAS: list containers without s", nil, err)
	_, err = account(sco, sas.AccountPermissions{Read: true, Write: true, List: true}, sas.ProtocolHTTPSandHTTP).DeleteBlob(ctx, name+"y", "b", nil)
	record("account SAS: delete without d", nil, err)
	_, err = account(sco, sas.AccountPermissions{Read: true, List: true}, sas.ProtocolHTTPS).DownloadStream(ctx, name+"y", "b", nil)
	record("account SAS: https only over http", nil, err)
	_, err = as.DeleteContainer(ctx, name+"y", nil)
	record("account SAS: delete container", nil, err)
	return obs
}
