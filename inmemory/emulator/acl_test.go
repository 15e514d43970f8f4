package emulator

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// aclBody is a Set Table ACL body of the policies, each id, start, expiry, permission
// ("" leaves an element out).
func aclBody(policies ...[4]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
	for _, p := range policies {
		b.WriteString("<SignedIdentifier><Id>" + p[0] + "</Id><AccessPolicy>")
		for i, name := range []string{"", "Start", "Expiry", "Permission"} {
			if i > 0 && p[i] != "" {
				b.WriteString("<" + name + ">" + p[i] + "</" + name + ">")
			}
		}
		b.WriteString("</AccessPolicy></SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return b.String()
}

func TestTableACL(t *testing.T) {
	srv := server(t, nil)
	c := devClient(t, srv)
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	setACL := func(table, body string) response {
		return c.do("PUT", table+"?comp=acl", body, "Content-Type", "application/xml")
	}
	r := c.do("GET", "Orders?comp=acl", "")
	wantStatus(t, "the ACL of a new table", r, 200)
	if !strings.Contains(r.body, "<SignedIdentifiers></SignedIdentifiers>") || r.header.Get("Content-Type") != "application/xml" {
		t.Errorf("the ACL of a new table: %s %s", r.header.Get("Content-Type"), r.body)
	}
	wantStatus(t, "set two policies", setACL("Orders", aclBody(
		[4]string{"read", "2026-01-02T03:04:05Z", "2099-01-01T00:00:00.5Z", "r"},
		[4]string{"write-only", "", "2099-01-01", "au"},
	)), 204)
	r = c.do("GET", "Orders?comp=acl", "")
	wantStatus(t, "get the policies", r, 200)
	var doc signedIdentifiersXML
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	got := fmt.Sprint(doc.Identifiers[0].ID, *doc.Identifiers[0].Policy, doc.Identifiers[1].ID, *doc.Identifiers[1].Policy)
	want := "read{2026-01-02T03:04:05.0000000Z 2099-01-01T00:00:00.5000000Z r}write-only{ 2099-01-01T00:00:00.0000000Z au}"
	if len(doc.Identifiers) != 2 || got != want {
		t.Errorf("the policies read back: %s, want %s", got, want)
	}

	six := make([][4]string, 6)
	for i := range six {
		six[i] = [4]string{fmt.Sprint("p", i), "", "", "r"}
	}
	for what, body := range map[string]string{
		"six policies":        aclBody(six...),
		"an id of 65":         aclBody([4]string{strings.Repeat("x", 65), "", "", "r"}),
		"an empty id":         aclBody([4]string{"", "", "", "r"}),
		"a permission l":      aclBody([4]string{"p", "", "", "rl"}),
		"a date that is none": aclBody([4]string{"p", "", "tomorrow", "r"}),
		"not XML":             "{}",
	} {
		wantError(t, what, setACL("Orders", body), 400, "InvalidXmlDocument")
	}
	wantStatus(t, "five policies", setACL("Orders", aclBody(six[:5]...)), 204)
	wantError(t, "the ACL of a missing table", c.do("GET", "Missing?comp=acl", ""), 404, "TableNotFound")
	wantError(t, "set the ACL of a missing table", setACL("Missing", aclBody()), 404, "TableNotFound")
	wantError(t, "comp=acl on an entity", c.do("GET", "Orders(PartitionKey='p',RowKey='1')?comp=acl", ""), 501, "NotImplemented")
	wantError(t, "POST comp=acl", c.do("POST", "Orders?comp=acl", aclBody(), "Content-Type", "application/xml"), 501, "NotImplemented")

	wantStatus(t, "an empty body clears the ACL", setACL("Orders", ""), 204)
	if r := c.do("GET", "Orders?comp=acl", ""); !strings.Contains(r.body, "<SignedIdentifiers></SignedIdentifiers>") {
		t.Errorf("after clearing: %s", r.body)
	}
}

// A table SAS naming a stored access policy takes from it the fields it sets; it may not
// repeat them; changing or removing the policy, or the table, changes or revokes it.
func TestTableSASStoredPolicy(t *testing.T) {
	srv := server(t, nil)
	c := devClient(t, srv)
	base, key := srv.URL+"/"+DevelopmentAccount, c.key
	for _, tn := range []string{"tab1", "tab2"} {
		wantStatus(t, "create "+tn, c.do("POST", "Tables", `{"TableName":"`+tn+`"}`), 201)
	}
	wantStatus(t, "insert", c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"a"}`), 201)
	shared := c.do
	setACL := func(body string) {
		t.Helper()
		wantStatus(t, "set the ACL", shared("PUT", "tab1?comp=acl", body, "Content-Type", "application/xml"), 204)
	}
	now := time.Now()
	hour, past := sasTime(now.Add(time.Hour)), sasTime(now.Add(-time.Hour))
	setACL(aclBody(
		[4]string{"reader", "", hour, "r"},
		[4]string{"open", "", "", ""},
		[4]string{"old", "", past, "r"},
		[4]string{"later", hour, sasTime(now.Add(2 * time.Hour)), "r"},
	))
	tok := func(kv ...string) string {
		return tableSAS(key, DevelopmentAccount, values(append([]string{"sv", "2019-02-02", "tn", "tab1"}, kv...)...))
	}
	read := func(token string) response {
		return sasDo(t, base, "GET", "tab1(PartitionKey='p',RowKey='a')", token, "")
	}
	insert := func(token, rk string) response {
		return sasDo(t, base, "POST", "tab1", token, `{"PartitionKey":"p","RowKey":"`+rk+`"}`)
	}
	wantStatus(t, "read with the reader policy", read(tok("si", "reader")), 200)
	wantError(t, "insert with the reader policy", insert(tok("si", "reader"), "x"), 403, "AuthorizationPermissionMismatch")
	wantError(t, "the policy's permission repeated", read(tok("si", "reader", "sp", "r")), 403, "AuthenticationFailed")
	wantError(t, "the policy's expiry repeated", read(tok("si", "reader", "se", hour)), 403, "AuthenticationFailed")
	wantStatus(t, "the SAS's start beside the policy", read(tok("si", "reader", "st", past)), 200)
	wantStatus(t, "a policy that sets nothing, the SAS all", insert(tok("si", "open", "sp", "a", "se", hour), "y"), 201)
	wantError(t, "a policy that sets nothing, the SAS no expiry", read(tok("si", "open", "sp", "r")), 403, "AuthenticationFailed")
	wantError(t, "a policy that sets nothing, the SAS no permission", read(tok("si", "open", "se", hour)), 403, "AuthenticationFailed")
	wantError(t, "an expired policy", read(tok("si", "old")), 403, "AuthenticationFailed")
	wantError(t, "a policy not yet valid", read(tok("si", "later")), 403, "AuthenticationFailed")
	wantError(t, "a policy the table does not have", read(tok("si", "nobody", "sp", "r", "se", hour)), 403, "AuthenticationFailed")
	wantError(t, "another table's SAS naming the policy", sasDo(t, base, "GET", "tab2()", tableSAS(key, DevelopmentAccount,
		values("sv", "2019-02-02", "tn", "tab2", "si", "reader")), ""), 403, "AuthenticationFailed")
	wantError(t, "an ACL read with the SAS", sasDo(t, base, "GET", "tab1?comp=acl", tok("si", "reader"), ""), 403, "AuthorizationFailure")
	wantError(t, "an ACL read with an account SAS", sasDo(t, base, "GET", "tab1?comp=acl", accountSAS(key, DevelopmentAccount,
		values("sv", "2019-02-02", "ss", "t", "srt", "sco", "sp", "rwdlacu", "se", hour)), ""), 403, "AuthorizationFailure")

	setACL(aclBody([4]string{"reader", "", hour, "a"})) // the policy changes: the same SAS now inserts, and reads no more
	wantError(t, "read after the policy changed", read(tok("si", "reader")), 403, "AuthorizationPermissionMismatch")
	wantStatus(t, "insert after the policy changed", insert(tok("si", "reader"), "z"), 201)
	setACL("")
	wantError(t, "read after the policy was removed", read(tok("si", "reader")), 403, "AuthenticationFailed")

	setACL(aclBody([4]string{"reader", "", hour, "r"}))
	wantStatus(t, "delete the table", shared("DELETE", "Tables('tab1')", ""), 204)
	wantStatus(t, "create it again", shared("POST", "Tables", `{"TableName":"tab1"}`), 201)
	if r := shared("GET", "tab1?comp=acl", ""); !strings.Contains(r.body, "<SignedIdentifiers></SignedIdentifiers>") {
		t.Errorf("a table made again has its old ACL: %s", r.body)
	}
}

// With a data directory, a table's stored access policies are there after a crash (the
// directory copied as it is) and after a clean stop; those of a deleted table are not, and
// a damaged acl.json stops the start.
func TestTableACLPersist(t *testing.T) {
	dir := t.TempDir()
	h, _ := persistent(t, dir, 0)
	c := devClient(t, httptestServer(t, h))
	for _, tn := range []string{"Kept", "Gone"} {
		wantStatus(t, "create "+tn, c.do("POST", "Tables", `{"TableName":"`+tn+`"}`), 201)
		wantStatus(t, "set the ACL of "+tn, c.do("PUT", tn+"?comp=acl", aclBody(
			[4]string{"reader", "2026-01-02T03:04:05Z", "2099-01-01T00:00:00.5Z", "r"},
			[4]string{"open", "", "", ""},
		), "Content-Type", "application/xml"), 204)
	}
	wantStatus(t, "delete Gone", c.do("DELETE", "Tables('Gone')", ""), 204)
	want := c.do("GET", "Kept?comp=acl", "").body
	if !strings.Contains(want, "<Id>reader</Id>") || !strings.Contains(want, "<Id>open</Id>") {
		t.Fatalf("the ACL before the restart: %s", want)
	}
	check := func(what, dir string) {
		t.Helper()
		h, _ := persistent(t, dir, 0)
		defer h.Close()
		c := devClient(t, httptestServer(t, h))
		if got := c.do("GET", "Kept?comp=acl", "").body; got != want {
			t.Errorf("%s: the ACL is %s, want %s", what, got, want)
		}
		wantStatus(t, what+": create Gone again", c.do("POST", "Tables", `{"TableName":"Gone"}`), 201)
		if got := c.do("GET", "Gone?comp=acl", "").body; strings.Contains(got, "<Id>") {
			t.Errorf("%s: the deleted table's policies came back: %s", what, got)
		}
	}
	check("after a crash", copyDir(t, dir))
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	check("after a clean stop", copyDir(t, dir))

	// Policies of a table the tables do not hold (a crash between a table's delete and the
	// rewrite of acl.json) are not loaded.
	ghost := copyDir(t, dir)
	if err := os.WriteFile(filepath.Join(ghost, DevelopmentAccount, aclName), []byte(`{"tables":{"ghost":[{"id":"x","permission":"r"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h2, _ := persistent(t, ghost, 0)
	defer h2.Close()
	c2 := devClient(t, httptestServer(t, h2))
	wantStatus(t, "create ghost", c2.do("POST", "Tables", `{"TableName":"ghost"}`), 201)
	if got := c2.do("GET", "ghost?comp=acl", "").body; strings.Contains(got, "<Id>") {
		t.Errorf("the policies of a table that was not there were loaded: %s", got)
	}

	damaged := copyDir(t, dir)
	if err := os.WriteFile(filepath.Join(damaged, DevelopmentAccount, aclName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(&Options{DataDir: damaged})
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, aclName) {
		t.Errorf("a damaged %s: %v, want a *CorruptError naming it", aclName, err)
	}
}
