package fidelity

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
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

// aclDeviations are the steps of the ACL matrix where Azurite answers otherwise than the
// service: the deviation's name in Deviations, and Azurite's answer.
var aclDeviations = map[string]struct{ deviation, azurite string }{
	"SAS si: the policy's sp repeated":      {"acl-policy-fields", ""},
	"SAS si: the policy's se repeated":      {"acl-policy-fields", ""},
	"set a policy that sets nothing":        {"acl-policy-fields", "400 "},
	"SAS si: the SAS's sp and se":           {"acl-policy-fields", "403 AuthorizationFailure"},
	"SAS si: an unknown policy":             {"sas-token-code", "403 AuthorizationFailure"},
	"SAS si: an expired policy":             {"sas-token-code", "403 AuthorizationFailure"},
	"SAS si: read after the policy is gone": {"sas-token-code", "403 AuthorizationFailure"},
	"SAS si: get the ACL":                   {"sas-acl-code", "403 AuthorizationPermissionMismatch"},
}

// TestEmulatorTableACL runs the Go SDK's Set and Get Table ACL, and table SAS that name a
// stored access policy (si), against the emulator and Azurite, checks the outcomes the
// service documents and compares the two, but for the listed deviations.
func TestEmulatorTableACL(t *testing.T) {
	table := "acl" + randomSuffix()
	emu := runACLMatrix(t, emulatorEndpoint(t), table)
	checkACL(t, "emulator", emu)
	az := azuriteEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the ACL matrix ran on the emulator only")
		return
	}
	azr := runACLMatrix(t, az, table)
	checkACL(t, "azurite", azr)
	for i := range azr {
		if _, ok := aclDeviations[azr[i].Step]; ok {
			azr[i].Err, azr[i].Value = "", nil
			if i < len(emu) {
				emu[i].Err, emu[i].Value = "", nil
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers the ACL matrix otherwise than Azurite (-azurite +emulator):\n%s", diff)
	}
}

// checkACL checks each step's outcome: the service's, or for a deviation Azurite's own.
func checkACL(t *testing.T, side string, obs []observation) {
	t.Helper()
	want := map[string]string{
		"set two policies":                      "",
		"get the policies":                      "",
		"set six policies":                      "400 InvalidXmlDocument",
		"get the ACL of a missing table":        "404 TableNotFound",
		"set the ACL of a missing table":        "404 TableNotFound",
		"SAS si: read":                          "",
		"SAS si: insert without a":              "403 AuthorizationPermissionMismatch",
		"SAS si: the policy's sp repeated":      "403 AuthenticationFailed",
		"SAS si: the policy's se repeated":      "403 AuthenticationFailed",
		"SAS si: the SAS's sp and se":           "",
		"SAS si: an unknown policy":             "403 AuthenticationFailed",
		"SAS si: an expired policy":             "403 AuthenticationFailed",
		"SAS si: get the ACL":                   "403 AuthorizationFailure",
		"set a policy that sets nothing":        "",
		"clear the policies":                    "",
		"get no policies":                       "",
		"SAS si: read after the policy is gone": "403 AuthenticationFailed",
	}
	for _, o := range obs {
		w, ok := want[o.Step]
		if !ok {
			t.Errorf("%s: step %q has no expectation", side, o.Step)
			continue
		}
		if d, dev := aclDeviations[o.Step]; dev && side == "azurite" {
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

// policyText renders a stored access policy as the comparison reads it: times to the
// second, in UTC.
func policyText(si *aztables.SignedIdentifier) string {
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	ap := si.AccessPolicy
	if ap == nil {
		return *si.ID + ":none"
	}
	perm := "-"
	if ap.Permission != nil {
		perm = *ap.Permission
	}
	return fmt.Sprintf("%s:%s..%s:%s", *si.ID, at(ap.Start), at(ap.Expiry), perm)
}

// runACLMatrix runs the ACL calls on one service with Shared Key, and reads with SAS that
// name the policies.
func runACLMatrix(t *testing.T, endpoint, table string) []observation {
	t.Helper()
	ctx := context.Background()
	sc := matrixClient(t, endpoint, emulator.DevelopmentKey)
	t.Cleanup(func() { _, _ = sc.DeleteTable(context.Background(), table, nil) })
	if _, err := sc.CreateTable(ctx, table, nil); err != nil {
		t.Fatal(err)
	}
	tc := sc.NewClient(table)
	if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"a"}`), nil); err != nil {
		t.Fatal(err)
	}
	var obs []observation
	record := func(step string, v any, err error) {
		obs = append(obs, observation{Step: step, Err: errText(err), Value: v})
	}
	// Whole seconds: the SDK signs times to the second.
	now := time.Now().UTC().Truncate(time.Second)
	start, hour, past := now.Add(-time.Hour), now.Add(time.Hour), now.Add(-time.Minute)
	policies := []*aztables.SignedIdentifier{
		{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &hour, Permission: to.Ptr("r")}},
		{ID: to.Ptr("expired"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &past, Permission: to.Ptr("r")}},
	}
	_, err := tc.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: policies})
	record("set two policies", nil, err)
	resp, err := tc.GetAccessPolicy(ctx, nil)
	var got []string
	for _, si := range resp.SignedIdentifiers {
		got = append(got, policyText(si))
	}
	record("get the policies", strings.Join(got, " "), err)
	// The SDK refuses more than five policies itself: six are sent by hand.
	var six strings.Builder
	six.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
	for i := range 6 {
		fmt.Fprintf(&six, "<SignedIdentifier><Id>p%d</Id><AccessPolicy><Start>%s</Start><Expiry>%s</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>",
			i, start.Format(time.RFC3339), hour.Format(time.RFC3339))
	}
	six.WriteString("</SignedIdentifiers>")
	record("set six policies", nil, putACL(t, endpoint, table, six.String()))
	missing := sc.NewClient(table + "x")
	_, err = missing.GetAccessPolicy(ctx, nil)
	record("get the ACL of a missing table", nil, err)
	_, err = missing.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: policies[:1]})
	record("set the ACL of a missing table", nil, err)

	cred, err := aztables.NewSharedKeyCredential(emulator.DevelopmentAccount, emulator.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := &aztables.ClientOptions{ClientOptions: azuritetest.ClientOptions(t)}
	// sasTable is a client of the table authorized by a table SAS with v's fields.
	sasTable := func(v aztables.SASSignatureValues) *aztables.Client {
		t.Helper()
		v.TableName, v.Protocol = table, aztables.SASProtocolHTTPSandHTTP
		q, err := v.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		return sasClient(t, endpoint+"/"+table+"?"+q, nil, opts)
	}
	read := func(step string, v aztables.SASSignatureValues) {
		_, err := sasTable(v).GetEntity(ctx, "p", "a", nil)
		record(step, nil, err)
	}
	read("SAS si: read", aztables.SASSignatureValues{Identifier: "reader"})
	_, err = sasTable(aztables.SASSignatureValues{Identifier: "reader"}).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"b"}`), nil)
	record("SAS si: insert without a", nil, err)
	read("SAS si: the policy's sp repeated", aztables.SASSignatureValues{Identifier: "reader", Permissions: "r"})
	read("SAS si: the policy's se repeated", aztables.SASSignatureValues{Identifier: "reader", ExpiryTime: hour})
	read("SAS si: an unknown policy", aztables.SASSignatureValues{Identifier: "nobody", Permissions: "r", ExpiryTime: hour})
	read("SAS si: an expired policy", aztables.SASSignatureValues{Identifier: "expired"})
	_, err = sasTable(aztables.SASSignatureValues{Identifier: "reader"}).GetAccessPolicy(ctx, nil)
	record("SAS si: get the ACL", nil, err)
	_, err = tc.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("open"), AccessPolicy: &aztables.AccessPolicy{}},
	}})
	record("set a policy that sets nothing", nil, err)
	read("SAS si: the SAS's sp and se", aztables.SASSignatureValues{Identifier: "open", Permissions: "r", ExpiryTime: hour})
	_, err = tc.SetAccessPolicy(ctx, nil)
	record("clear the policies", nil, err)
	resp, err = tc.GetAccessPolicy(ctx, nil)
	record("get no policies", len(resp.SignedIdentifiers), err)
	read("SAS si: read after the policy is gone", aztables.SASSignatureValues{Identifier: "reader"})
	return obs
}

// putACL sends Set Table ACL with body, signed with Shared Key Lite as the SDKs sign it,
// and returns the failure as errText reads it: a *azcore.ResponseError of the status and
// error code.
func putACL(t *testing.T, endpoint, table, body string) error {
	t.Helper()
	req, err := http.NewRequest("PUT", endpoint+"/"+table+"?comp=acl", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Accept", "application/xml")
	key, _ := base64.StdEncoding.DecodeString(emulator.DevelopmentKey)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(req.Header.Get("x-ms-date") + "\n/" + emulator.DevelopmentAccount + req.URL.EscapedPath() + "?comp=acl"))
	req.Header.Set("Authorization", "SharedKeyLite "+emulator.DevelopmentAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode < 300 {
		return nil
	}
	return &azcore.ResponseError{StatusCode: resp.StatusCode, ErrorCode: resp.Header.Get("x-ms-error-code")}
}
