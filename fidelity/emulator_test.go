package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// The cross-client matrix: one sequence of calls of the Azure SDK's own table client
// (aztables), which this repository did not write, run against the emulator of package
// inmemory/emulator (started in this process on a loopback port) and against Azurite. Each
// call's outcome is recorded (the entity bodies as the SDK returns them, with the values
// that differ by nature, ETags, timestamps, hosts and continuation tokens, taken out; the
// status and error code of each failure), the expectations are checked on each side, and
// the two records must be equal but for the deviations the matrix names.

// An observation is what one call of the matrix returned.
type observation struct {
	Step string
	// Err is "status code" of a failure, "" on success.
	Err   string
	Value any `json:",omitempty"`
}

// emulatorEndpoint starts the emulator in process and returns its development account's
// table endpoint.
func emulatorEndpoint(t testing.TB) string {
	t.Helper()
	h, err := emulator.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/" + emulator.DevelopmentAccount
}

// azuriteEndpoint returns the table endpoint of the Azurite the environment names, or ""
// when there is none, or when the connection string names an account other than the
// development account (the matrix signs with its well-known key).
func azuriteEndpoint(t testing.TB) string {
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
		return "http://127.0.0.1:10002/" + emulator.DevelopmentAccount
	case kv["AccountName"] != emulator.DevelopmentAccount || kv["AccountKey"] != emulator.DevelopmentKey:
		t.Logf("%s names another account than the development account", azuritetest.ConnEnv)
		return ""
	case kv["TableEndpoint"] == "":
		t.Fatalf("%s names no TableEndpoint", azuritetest.ConnEnv)
	}
	return kv["TableEndpoint"]
}

// matrixClient returns a service client of endpoint's development account, signing with key.
func matrixClient(t testing.TB, endpoint, key string) *aztables.ServiceClient {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(emulator.DevelopmentAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	opts := azuritetest.ClientOptions(t)
	c, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, &aztables.ClientOptions{ClientOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmulatorMatrix(t *testing.T) {
	table := "emx" + randomSuffix()
	emu := runMatrix(t, emulatorEndpoint(t), table)
	checkMatrix(t, "emulator", emu)
	az := azuriteEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the matrix ran on the emulator only")
		return
	}
	azr := runMatrix(t, az, table)
	checkMatrix(t, "azurite", azr)
	// The steps where Azurite answers otherwise than the service (and the emulator) were
	// checked against Azurite's own answer; they are left out of the comparison.
	for i := range azr {
		if _, ok := matrixDeviations[azr[i].Step]; ok {
			azr[i].Err, azr[i].Value = "", nil
			if i < len(emu) {
				emu[i].Err, emu[i].Value = "", nil
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers the matrix otherwise than Azurite (-azurite +emulator):\n%s", diff)
	}
}

// matrixDeviations are the matrix steps where Azurite is known to differ from the service:
// the deviation's name in Deviations, and Azurite's answer.
var matrixDeviations = map[string]struct{ deviation, azurite string }{
	"a bad signature":                                  {"bad-signature-code", "403 AuthorizationFailure"},
	"transaction across partitions":                    {"cross-partition-transaction", ""},
	"create a table with a short name":                 {"table-name-code", "400 "},
	"create a table named with a leading digit":        {"table-name-code", "400 "},
	"insert a key with a slash":                        {"invalid-key-code", "400 InvalidInput"},
	"insert a property name that is not an identifier": {"property-name-rules", ""},
}

// checkMatrix checks the expectations both sides must meet: the outcome of each step whose
// outcome the service documents.
func checkMatrix(t *testing.T, side string, obs []observation) {
	t.Helper()
	want := map[string]string{
		"create table":                                     "",
		"create table again":                               "409 TableAlreadyExists",
		"add":                                              "",
		"add again":                                        "409 EntityAlreadyExists",
		"replace with a stale etag":                        "412 UpdateConditionNotSatisfied",
		"merge with a stale etag":                          "412 UpdateConditionNotSatisfied",
		"delete with a stale etag":                         "412 UpdateConditionNotSatisfied",
		"replace with the etag":                            "",
		"merge with the etag":                              "",
		"update of a missing entity":                       "404 ResourceNotFound",
		"get a missing entity":                             "404 ResourceNotFound",
		"get from a missing table":                         "404 TableNotFound",
		"delete a missing table":                           "404 ResourceNotFound",
		"a bad signature":                                  "403 AuthenticationFailed",
		"transaction":                                      "",
		"transaction with a failing insert":                "202 EntityAlreadyExists at 1",
		"transaction with a stale etag":                    "202 UpdateConditionNotSatisfied at 1",
		"transaction of updates":                           "",
		"transaction across partitions":                    "202 CommandsInBatchActOnDifferentPartitions at 1",
		"transaction with a row twice":                     "202 InvalidDuplicateRow at 1",
		"create a table with a short name":                 "400 OutOfRangeInput",
		"create a table named with a leading digit":        "400 InvalidResourceName",
		"insert a key with a slash":                        "400 OutOfRangeInput",
		"insert a key with a quote":                        "",
		"insert a string over 32K characters":              "400 PropertyValueTooLarge",
		"insert a property name that is not an identifier": "400 PropertyNameInvalid",
		"delete table":                                     "",
	}
	for _, o := range obs {
		w, ok := want[o.Step]
		if d, dev := matrixDeviations[o.Step]; dev && side == "azurite" {
			if _, listed := Deviations[d.deviation]; !listed {
				t.Errorf("step %s names deviation %q, which Deviations does not list", o.Step, d.deviation)
			}
			w = d.azurite
		}
		if ok && o.Err != w {
			t.Errorf("%s: %s: got %q, want %q", side, o.Step, o.Err, w)
		}
	}
}

// runMatrix runs the calls on one service.
func runMatrix(t *testing.T, endpoint, table string) []observation {
	t.Helper()
	sc := matrixClient(t, endpoint, emulator.DevelopmentKey)
	ctx := context.Background()
	var obs []observation
	record := func(step string, v any, err error) {
		obs = append(obs, observation{Step: step, Err: errText(err), Value: v})
	}
	tc := sc.NewClient(table)
	t.Cleanup(func() { _, _ = sc.DeleteTable(context.Background(), table, nil) })

	_, err := sc.CreateTable(ctx, table, nil)
	record("create table", nil, err)
	_, err = sc.CreateTable(ctx, table, nil)
	record("create table again", nil, err)

	entity := `{"PartitionKey":"p1","RowKey":"r1","Name":"Ann","Age":30,` +
		`"Big@odata.type":"Edm.Int64","Big":"1234567890123",` +
		`"Score@odata.type":"Edm.Double","Score":2.0,"Ratio":0.25,` +
		`"When@odata.type":"Edm.DateTime","When":"2026-01-02T03:04:05.1234567Z",` +
		`"Id@odata.type":"Edm.Guid","Id":"00112233-4455-6677-8899-aabbccddeeff",` +
		`"Data@odata.type":"Edm.Binary","Data":"AQID","Flag":true}`
	add, err := tc.AddEntity(ctx, []byte(entity), nil)
	record("add", entityValue(add.Value), err)
	_, err = tc.AddEntity(ctx, []byte(entity), nil)
	record("add again", nil, err)

	for _, f := range []struct {
		name   string
		format aztables.MetadataFormat
	}{{"none", aztables.MetadataFormatNone}, {"minimal", aztables.MetadataFormatMinimal}, {"full", aztables.MetadataFormatFull}} {
		got, err := tc.GetEntity(ctx, "p1", "r1", &aztables.GetEntityOptions{Format: to.Ptr(f.format)})
		record("get with "+f.name+" metadata", entityValue(got.Value), err)
	}
	cur, err := tc.GetEntity(ctx, "p1", "r1", nil)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r1","Name":"Bob"}`), &aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETag(`W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`)), UpdateMode: aztables.UpdateModeReplace})
	record("replace with a stale etag", nil, err)
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r1","Name":"Bob"}`), &aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETag(`W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`)), UpdateMode: aztables.UpdateModeMerge})
	record("merge with a stale etag", nil, err)
	upd, err := tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r1","Name":"Bob","Age":31}`), &aztables.UpdateEntityOptions{IfMatch: &cur.ETag, UpdateMode: aztables.UpdateModeReplace})
	record("replace with the etag", nil, err)
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r1","City":"Oslo"}`), &aztables.UpdateEntityOptions{IfMatch: &upd.ETag, UpdateMode: aztables.UpdateModeMerge})
	record("merge with the etag", nil, err)
	got, err := tc.GetEntity(ctx, "p1", "r1", nil)
	record("get after replace and merge", entityValue(got.Value), err)
	_, err = tc.DeleteEntity(ctx, "p1", "r1", &aztables.DeleteEntityOptions{IfMatch: &cur.ETag})
	record("delete with a stale etag", nil, err)
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"nope","Name":"x"}`), &aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETagAny), UpdateMode: aztables.UpdateModeReplace})
	record("update of a missing entity", nil, err)

	_, err = tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r2","Name":"Cy"}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	record("upsert-merge a new entity", nil, err)
	_, err = tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r2","Age":7}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	record("upsert-merge an entity", nil, err)
	got, err = tc.GetEntity(ctx, "p1", "r2", nil)
	record("get after upsert-merge", entityValue(got.Value), err)
	_, err = tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p1","RowKey":"r2","Age":8}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	record("upsert-replace an entity", nil, err)
	got, err = tc.GetEntity(ctx, "p1", "r2", nil)
	record("get after upsert-replace", entityValue(got.Value), err)
	_, err = tc.DeleteEntity(ctx, "p1", "r2", nil)
	record("delete", nil, err)
	_, err = tc.GetEntity(ctx, "p1", "r2", nil)
	record("get a missing entity", nil, err)
	_, err = sc.NewClient(table+"x").GetEntity(ctx, "p1", "r1", nil)
	record("get from a missing table", nil, err)
	_, err = sc.DeleteTable(ctx, table+"x", nil)
	record("delete a missing table", nil, err)

	// Queries: a filter, a projection and pages of 4.
	for i := range 10 {
		e := fmt.Sprintf(`{"PartitionKey":"p2","RowKey":"r%02d","Age":%d,"Name":"n%d"}`, i, i*10, i)
		if _, err := tc.AddEntity(ctx, []byte(e), &aztables.AddEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)}); err != nil {
			t.Fatalf("add p2/r%02d: %v", i, err)
		}
	}
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{
		Filter: to.Ptr("PartitionKey eq 'p2' and Age ge 20"),
		Select: to.Ptr("RowKey,Age,Missing"),
		Top:    to.Ptr(int32(4)),
	})
	var pages [][]any
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			record("query page", nil, err)
			break
		}
		var rows []any
		for _, e := range page.Entities {
			rows = append(rows, entityValue(e))
		}
		pages = append(pages, rows)
	}
	record("query with filter, select and top", pages, nil)
	var names []string
	tp := sc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + table + "'")})
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			record("list tables", nil, err)
			break
		}
		for _, tt := range page.Tables {
			names = append(names, *tt.Name)
		}
	}
	record("list tables", names, nil)

	// Transactions: one that commits, one whose second action fails and writes nothing.
	tx := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p3","RowKey":"a","N":1}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p3","RowKey":"b","N":2}`)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: []byte(`{"PartitionKey":"p3","RowKey":"c","N":3}`)},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction", nil, err)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p3","RowKey":"d","N":4}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p3","RowKey":"a","N":5}`)},
		{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"p3","RowKey":"b"}`)},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction with a failing insert", nil, err)
	var rows []any
	for pg := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p3'")}); pg.More(); {
		page, err := pg.NextPage(ctx)
		if err != nil {
			record("rows after the transactions", nil, err)
			break
		}
		for _, e := range page.Entities {
			rows = append(rows, entityValue(e))
		}
	}
	record("rows after the transactions", rows, nil)

	// Transactions of updates: a stale ETag fails the action that carries it; a replace, a
	// merge and an upsert commit together; more than 100 actions are refused.
	stalePut := azcore.ETag(`W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: []byte(`{"PartitionKey":"p3","RowKey":"a","M":1}`), IfMatch: to.Ptr(azcore.ETagAny)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: []byte(`{"PartitionKey":"p3","RowKey":"b","R":1}`), IfMatch: &stalePut},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction with a stale etag", nil, err)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: []byte(`{"PartitionKey":"p3","RowKey":"a","M":1}`), IfMatch: to.Ptr(azcore.ETagAny)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: []byte(`{"PartitionKey":"p3","RowKey":"b","R":1}`), IfMatch: to.Ptr(azcore.ETagAny)},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: []byte(`{"PartitionKey":"p3","RowKey":"e","E":1}`)},
		{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"p3","RowKey":"c"}`)},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction of updates", nil, err)
	rows = nil
	for pg := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p3'"), Format: to.Ptr(aztables.MetadataFormatFull)}); pg.More(); {
		page, err := pg.NextPage(ctx)
		if err != nil {
			record("rows after the updates, full metadata", nil, err)
			break
		}
		for _, e := range page.Entities {
			rows = append(rows, entityValue(e))
		}
	}
	record("rows after the updates, full metadata", rows, nil)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p4","RowKey":"a"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p5","RowKey":"a"}`)},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction across partitions", nil, err)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p6","RowKey":"a"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p6","RowKey":"a"}`)},
	}
	_, err = tc.SubmitTransaction(ctx, tx, nil)
	record("transaction with a row twice", nil, err)

	// Keys and names the service refuses, and values it takes.
	_, err = sc.CreateTable(ctx, "ab", nil)
	record("create a table with a short name", nil, err)
	_, err = sc.CreateTable(ctx, "1abc", nil)
	record("create a table named with a leading digit", nil, err)
	_, err = tc.AddEntity(ctx, []byte(`{"PartitionKey":"p7","RowKey":"a/b"}`), nil)
	record("insert a key with a slash", nil, err)
	_, err = tc.AddEntity(ctx, []byte(`{"PartitionKey":"p7","RowKey":"it's"}`), nil)
	record("insert a key with a quote", nil, err)
	got, err = tc.GetEntity(ctx, "p7", "it's", nil)
	record("get a key with a quote", entityValue(got.Value), err)
	_, err = tc.AddEntity(ctx, []byte(`{"PartitionKey":"p7","RowKey":"u","Text":"héllo ✓ 𝄞","Neg":-7,"Zero@odata.type":"Edm.Double","Zero":0.0,"Big@odata.type":"Edm.Double","Big":1e300}`), nil)
	record("insert text and numbers", nil, err)
	got, err = tc.GetEntity(ctx, "p7", "u", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
	record("get text and numbers", entityValue(got.Value), err)
	_, err = tc.AddEntity(ctx, []byte(`{"PartitionKey":"p7","RowKey":"big","S":"`+strings.Repeat("x", 32*1024+1)+`"}`), nil)
	record("insert a string over 32K characters", nil, err)
	_, err = tc.AddEntity(ctx, []byte(`{"PartitionKey":"p7","RowKey":"bad name","1x":1}`), nil)
	record("insert a property name that is not an identifier", nil, err)

	// Pages of tables.
	for i := range 3 {
		if _, err := sc.CreateTable(ctx, fmt.Sprintf("%sp%d", table, i), nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = sc.DeleteTable(context.Background(), fmt.Sprintf("%sp%d", table, i), nil) })
	}
	var tpages [][]string
	tp = sc.NewListTablesPager(&aztables.ListTablesOptions{
		Filter: to.Ptr("TableName ge '" + table + "p' and TableName lt '" + table + "q'"),
		Top:    to.Ptr(int32(2)),
	})
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			record("tables in pages of 2", nil, err)
			break
		}
		var ns []string
		for _, tt := range page.Tables {
			ns = append(ns, strings.TrimPrefix(*tt.Name, table))
		}
		tpages = append(tpages, ns)
	}
	record("tables in pages of 2", tpages, nil)

	// A request signed with another key.
	bad := matrixClient(t, endpoint, "AAAA"+emulator.DevelopmentKey[4:])
	_, err = bad.NewClient(table).GetEntity(ctx, "p1", "r1", nil)
	record("a bad signature", nil, err)

	_, err = sc.DeleteTable(ctx, table, nil)
	record("delete table", nil, err)
	return obs
}

// errText is "status code" of a service failure, and for a failed transaction the failing
// action's code and index read from the multipart body, "" for no error.
func errText(err error) string {
	if err == nil {
		return ""
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err.Error()
	}
	if re.StatusCode == http.StatusAccepted && re.RawResponse != nil {
		return fmt.Sprintf("202 %s", batchFailure(re.RawResponse))
	}
	return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
}

var batchIndex = regexp.MustCompile(`"value":"(\d+):`)

// batchFailure reads the failing action's error code and index from a transaction's body.
func batchFailure(resp *http.Response) string {
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error()
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	start := bytes.IndexByte(body, '{')
	if start < 0 {
		return "no error body"
	}
	end := bytes.LastIndexByte(body, '}')
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(body[start:end+1], &e); err != nil {
		return "unreadable error body"
	}
	at := "?"
	if m := batchIndex.FindSubmatch(body); m != nil {
		at = string(m[1])
	}
	return e.Error.Code + " at " + at
}

// entityValue decodes an entity body as the SDK returns it and takes out what differs by
// nature between two services: ETags, timestamps, and the host in odata.metadata and
// odata.id. A null (a selected property the row lacks) is dropped: Azurite leaves the
// property out, the service writes null (see "select-missing-null").
func entityValue(body []byte) any {
	if body == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "unreadable: " + err.Error()
	}
	for k, v := range m {
		switch {
		case k == "odata.etag" || k == "Timestamp" || k == "odata.metadata" || k == "odata.id":
			m[k] = "(set)"
		case v == nil:
			delete(m, k)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		v, _ := json.Marshal(m[k])
		out[i] = k + "=" + string(v)
	}
	return out
}

// sasDeviations are the steps of the SAS matrix where Azurite answers otherwise than the
// service: the deviation's name in Deviations, and Azurite's answer.
var sasDeviations = map[string]struct{ deviation, azurite string }{
	"table SAS: expired":                        {"sas-token-code", "403 AuthorizationFailure"},
	"table SAS: not yet valid":                  {"sas-token-code", "403 AuthorizationFailure"},
	"table SAS: a stored access policy":         {"sas-token-code", "403 AuthorizationFailure"},
	"table SAS: bad signature":                  {"bad-signature-code", "403 AuthorizationFailure"},
	"table SAS: key range as the SDK writes it": {"bad-signature-code", "403 AuthorizationFailure"},
	"table SAS: query a key range":              {"sas-key-range", ""},
	"table SAS: read outside the key range":     {"sas-key-range", ""},
	"table SAS: insert outside the key range":   {"sas-key-range", ""},
	"table SAS: upsert without a":               {"sas-upsert-permission", ""},
	"account SAS: query entities with srt=o":    {"sas-query-resource-type", "403 AuthorizationResourceTypeMismatch"},
	"account SAS: expired":                      {"sas-token-code", "403 AuthorizationFailure"},
	"account SAS: bad signature":                {"bad-signature-code", "403 AuthorizationFailure"},
	"table SAS: transaction":                    {"sas-table-batch", "403 AuthorizationFailure"},
	"table SAS: transaction without a":          {"sas-table-batch", "403 AuthorizationFailure"},
}

// TestEmulatorSAS runs calls of the Go SDK with shared access signatures it signs itself
// (Client.GetTableSASURL, ServiceClient.GetAccountSASURL and the signature values they
// use) against the emulator and against Azurite, checks the outcomes the service
// documents and compares the two, but for the listed deviations.
func TestEmulatorSAS(t *testing.T) {
	table := "sas" + randomSuffix()
	emu := runSASMatrix(t, emulatorEndpoint(t), table)
	checkSAS(t, "emulator", emu)
	az := azuriteEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the SAS matrix ran on the emulator only")
		return
	}
	azr := runSASMatrix(t, az, table)
	checkSAS(t, "azurite", azr)
	for i := range azr {
		if _, ok := sasDeviations[azr[i].Step]; ok {
			azr[i].Err, azr[i].Value = "", nil
			if i < len(emu) {
				emu[i].Err, emu[i].Value = "", nil
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers the SAS matrix otherwise than Azurite (-azurite +emulator):\n%s", diff)
	}
}

// checkSAS checks each step's outcome: the service's, or for a deviation Azurite's own.
func checkSAS(t *testing.T, side string, obs []observation) {
	t.Helper()
	want := map[string]string{
		"table SAS: query":                          "",
		"table SAS: read":                           "",
		"table SAS: insert":                         "",
		"table SAS: upsert":                         "",
		"table SAS: merge":                          "",
		"table SAS: delete":                         "",
		"table SAS: insert without a":               "403 AuthorizationPermissionMismatch",
		"table SAS: delete without d":               "403 AuthorizationPermissionMismatch",
		"table SAS: upsert without a":               "403 AuthorizationPermissionMismatch",
		"table SAS: expired":                        "403 AuthenticationFailed",
		"table SAS: not yet valid":                  "403 AuthenticationFailed",
		"table SAS: a stored access policy":         "403 AuthenticationFailed",
		"table SAS: bad signature":                  "403 AuthenticationFailed",
		"table SAS: another table":                  "403 AuthorizationFailure",
		"table SAS: key range as the SDK writes it": "403 AuthenticationFailed",
		"table SAS: query a key range":              "",
		"table SAS: read outside the key range":     "403 AuthorizationFailure",
		"table SAS: insert outside the key range":   "403 AuthorizationFailure",
		"table SAS: transaction":                    "",
		"table SAS: transaction without a":          "202 AuthorizationPermissionMismatch at 0",
		"account SAS: https only over http":         "403 AuthorizationProtocolMismatch",
		"account SAS: list tables":                  "",
		"account SAS: create table":                 "",
		"account SAS: insert":                       "",
		"account SAS: query":                        "",
		"account SAS: query entities with srt=o":    "",
		"account SAS: insert without a":             "403 AuthorizationPermissionMismatch",
		"account SAS: list tables without c":        "403 AuthorizationResourceTypeMismatch",
		"account SAS: blob only":                    "403 AuthorizationServiceMismatch",
		"account SAS: expired":                      "403 AuthenticationFailed",
		"account SAS: bad signature":                "403 AuthenticationFailed",
		"account SAS: transaction":                  "",
		"account SAS: delete table":                 "",
	}
	for _, o := range obs {
		w, ok := want[o.Step]
		if !ok {
			t.Errorf("%s: step %q has no expectation", side, o.Step)
			continue
		}
		if d, dev := sasDeviations[o.Step]; dev && side == "azurite" {
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

// runSASMatrix runs the SAS calls on one service: the table is created, filled and dropped
// with Shared Key, everything else is authorized by a SAS.
func runSASMatrix(t *testing.T, endpoint, table string) []observation {
	t.Helper()
	ctx := context.Background()
	sc := matrixClient(t, endpoint, emulator.DevelopmentKey)
	t.Cleanup(func() {
		_, _ = sc.DeleteTable(context.Background(), table, nil)
		_, _ = sc.DeleteTable(context.Background(), table+"x", nil)
		_, _ = sc.DeleteTable(context.Background(), table+"y", nil)
	})
	if _, err := sc.CreateTable(ctx, table, nil); err != nil {
		t.Fatal(err)
	}
	tc := sc.NewClient(table)
	for _, k := range []string{"p/a", "p/b", "q/a"} {
		pk, rk, _ := strings.Cut(k, "/")
		if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	cred, err := aztables.NewSharedKeyCredential(emulator.DevelopmentAccount, emulator.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	var obs []observation
	record := func(step string, v any, err error) {
		obs = append(obs, observation{Step: step, Err: errText(err), Value: v})
	}
	opts := &aztables.ClientOptions{ClientOptions: azuritetest.ClientOptions(t)}
	now := time.Now().UTC()
	hour := now.Add(time.Hour)
	// tableClient is a client of table authorized by the SAS GetTableSASURL signs, its
	// query edited by edit when not nil.
	tableClient := func(perms aztables.SASPermissions, start, expiry time.Time, edit func(url.Values)) *aztables.Client {
		t.Helper()
		signer, err := aztables.NewClientWithSharedKey(endpoint+"/"+table, cred, opts)
		if err != nil {
			t.Fatal(err)
		}
		u, err := signer.GetTableSASURL(perms, start, expiry)
		if err != nil {
			t.Fatal(err)
		}
		return sasClient(t, pathStyle(t, u, endpoint, table), edit, opts)
	}
	keys := func(c *aztables.Client) ([]string, error) {
		var ks []string
		for pg := c.NewListEntitiesPager(nil); pg.More(); {
			page, err := pg.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, e := range page.Entities {
				var m map[string]any
				_ = json.Unmarshal(e, &m)
				ks = append(ks, fmt.Sprint(m["PartitionKey"], "/", m["RowKey"]))
			}
		}
		return ks, nil
	}
	all := aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}

	c := tableClient(all, time.Time{}, hour, nil)
	ks, err := keys(c)
	record("table SAS: query", ks, err)
	got, err := c.GetEntity(ctx, "p", "a", nil)
	record("table SAS: read", entityValue(got.Value), err)
	_, err = c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"c"}`), nil)
	record("table SAS: insert", nil, err)
	_, err = c.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"d","N":1}`), nil)
	record("table SAS: upsert", nil, err)
	_, err = c.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"d","M":1}`), &aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETagAny), UpdateMode: aztables.UpdateModeMerge})
	record("table SAS: merge", nil, err)
	_, err = c.DeleteEntity(ctx, "p", "d", nil)
	record("table SAS: delete", nil, err)

	_, err = tableClient(aztables.SASPermissions{Read: true, Update: true, Delete: true}, time.Time{}, hour, nil).
		AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"e"}`), nil)
	record("table SAS: insert without a", nil, err)
	_, err = tableClient(aztables.SASPermissions{Read: true, Add: true, Update: true}, time.Time{}, hour, nil).DeleteEntity(ctx, "p", "c", nil)
	record("table SAS: delete without d", nil, err)
	_, err = tableClient(aztables.SASPermissions{Read: true, Update: true}, time.Time{}, hour, nil).
		UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"f"}`), nil)
	record("table SAS: upsert without a", nil, err)
	_, err = tableClient(all, time.Time{}, now.Add(-time.Minute), nil).GetEntity(ctx, "p", "a", nil)
	record("table SAS: expired", nil, err)
	_, err = tableClient(all, hour, hour.Add(time.Hour), nil).GetEntity(ctx, "p", "a", nil)
	record("table SAS: not yet valid", nil, err)
	qs, err := aztables.SASSignatureValues{TableName: table, Identifier: "nopolicy"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sasClient(t, endpoint+"/"+table+"?"+qs, nil, opts).GetEntity(ctx, "p", "a", nil)
	record("table SAS: a stored access policy", nil, err)
	_, err = tableClient(all, time.Time{}, hour, func(v url.Values) { v.Set("sig", "AAAA"+v.Get("sig")[4:]) }).GetEntity(ctx, "p", "a", nil)
	record("table SAS: bad signature", nil, err)
	// The SAS of table used on another: the service checks tn against the URL's table.
	if _, err := sc.CreateTable(ctx, table+"x", nil); err != nil {
		t.Fatal(err)
	}
	other, err := aztables.NewClientWithSharedKey(endpoint+"/"+table, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	u, err := other.GetTableSASURL(all, time.Time{}, hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sasClient(t, pathStyle(t, u, endpoint, table+"x"), nil, opts).GetEntity(ctx, "p", "a", nil)
	record("table SAS: another table", nil, err)

	// aztables signs a key range but leaves it out of the query it returns (v1.4.1), so the
	// service, which signs the query's empty range, refuses the signature.
	ranged := all
	ranged.StartPartitionKey, ranged.EndPartitionKey = "p", "p"
	_, err = tableClient(ranged, time.Time{}, hour, nil).GetEntity(ctx, "p", "a", nil)
	record("table SAS: key range as the SDK writes it", nil, err)
	// With the range added to the query, the SAS is the one the SDK signed.
	addRange := func(v url.Values) { v.Set("spk", "p"); v.Set("epk", "p") }
	rc := tableClient(ranged, time.Time{}, hour, addRange)
	ks, err = keys(rc)
	record("table SAS: query a key range", ks, err)
	_, err = rc.GetEntity(ctx, "q", "a", nil)
	record("table SAS: read outside the key range", nil, err)
	_, err = rc.AddEntity(ctx, []byte(`{"PartitionKey":"r","RowKey":"a"}`), nil)
	record("table SAS: insert outside the key range", nil, err)

	tx := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"t","RowKey":"a"}`)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: []byte(`{"PartitionKey":"t","RowKey":"b"}`)},
	}
	_, err = c.SubmitTransaction(ctx, tx, nil)
	record("table SAS: transaction", nil, err)
	tx = []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"t","RowKey":"c"}`)}}
	_, err = tableClient(aztables.SASPermissions{Read: true, Update: true, Delete: true}, time.Time{}, hour, nil).SubmitTransaction(ctx, tx, nil)
	record("table SAS: transaction without a", nil, err)

	// Account SAS. GetAccountSASURL asks for https, which a request over http does not meet.
	u, err = sc.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true}, time.Time{}, hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sasService(t, u, nil, opts).NewClient(table).GetEntity(ctx, "p", "a", nil)
	record("account SAS: https only over http", nil, err)
	account := func(srt, sp, ss string, expiry time.Time, edit func(url.Values)) *aztables.ServiceClient {
		t.Helper()
		qp, err := aztables.AccountSASSignatureValues{
			Protocol: aztables.SASProtocolHTTPSandHTTP, Permissions: sp, Services: ss, ResourceTypes: srt, ExpiryTime: expiry,
		}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		return sasService(t, endpoint+"/?"+qp.Encode(), edit, opts)
	}
	as := account("sco", "rwdlacu", "t", hour, nil)
	var names []string
	tp := as.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + table + "'")})
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			record("account SAS: list tables", nil, err)
			break
		}
		for _, tt := range page.Tables {
			names = append(names, *tt.Name)
		}
	}
	record("account SAS: list tables", names, nil)
	_, err = as.CreateTable(ctx, table+"y", nil)
	record("account SAS: create table", nil, err)
	_, err = as.NewClient(table+"y").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"a"}`), nil)
	record("account SAS: insert", nil, err)
	ks, err = keys(as.NewClient(table + "y"))
	record("account SAS: query", ks, err)
	ks, err = keys(account("o", "r", "t", hour, nil).NewClient(table + "y"))
	record("account SAS: query entities with srt=o", ks, err)
	_, err = account("sco", "rwdlcu", "t", hour, nil).NewClient(table+"y").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"b"}`), nil)
	record("account SAS: insert without a", nil, err)
	tp = account("o", "rwdlacu", "t", hour, nil).NewListTablesPager(nil)
	_, err = tp.NextPage(ctx)
	record("account SAS: list tables without c", nil, err)
	_, err = account("sco", "rwdlacu", "b", hour, nil).NewClient(table+"y").GetEntity(ctx, "p", "a", nil)
	record("account SAS: blob only", nil, err)
	_, err = account("sco", "rwdlacu", "t", now.Add(-time.Minute), nil).NewClient(table+"y").GetEntity(ctx, "p", "a", nil)
	record("account SAS: expired", nil, err)
	_, err = account("sco", "rwdlacu", "t", hour, func(v url.Values) { v.Set("sig", "AAAA"+v.Get("sig")[4:]) }).NewClient(table+"y").GetEntity(ctx, "p", "a", nil)
	record("account SAS: bad signature", nil, err)
	tx = []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"t","RowKey":"a"}`)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: []byte(`{"PartitionKey":"t","RowKey":"b"}`)},
	}
	_, err = as.NewClient(table+"y").SubmitTransaction(ctx, tx, nil)
	record("account SAS: transaction", nil, err)
	_, err = as.DeleteTable(ctx, table+"y", nil)
	record("account SAS: delete table", nil, err)
	return obs
}

// sasClient returns a client of the table u names, authorized by the SAS in u's query
// after edit (when not nil) changes it.
func sasClient(t *testing.T, u string, edit func(url.Values), opts *aztables.ClientOptions) *aztables.Client {
	t.Helper()
	c, err := aztables.NewClientWithNoCredential(editQuery(t, u, edit), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sasService returns a service client of the account u names, authorized by the SAS in u's
// query after edit (when not nil) changes it.
func sasService(t *testing.T, u string, edit func(url.Values), opts *aztables.ClientOptions) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientWithNoCredential(editQuery(t, u, edit), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func editQuery(t *testing.T, u string, edit func(url.Values)) string {
	t.Helper()
	if edit == nil {
		return u
	}
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	v := p.Query()
	edit(v)
	p.RawQuery = v.Encode()
	return p.String()
}

// pathStyle returns the table URL of endpoint (path-style, account included) with the
// query of u, a URL GetTableSASURL returned: aztables v1.4.1 joins a path-style endpoint
// and the table without a slash (".../devstoreaccount1mytable?..."), which names another
// account.
func pathStyle(t *testing.T, u, endpoint, table string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return endpoint + "/" + table + "?" + p.RawQuery
}
