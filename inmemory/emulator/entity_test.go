package emulator

import (
	"strings"
	"testing"
)

// The service reads a Boolean, an Int32 and a DateTime from JSON text too, as Azure Storage
// Explorer and the JS SDK's typed values send them; text that is not of the type is refused.
func TestTypedValuesAsText(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	body := `{"PartitionKey":"p","RowKey":"r",` +
		`"B@odata.type":"Edm.Boolean","B":"FALSE","C@odata.type":"Edm.Boolean","C":"true",` +
		`"I@odata.type":"Edm.Int32","I":"-32",` +
		`"T@odata.type":"Edm.DateTime","T":"2023-01-01T23:00:00",` +
		`"U@odata.type":"Edm.DateTime","U":"2023-01-01T23:00:00.5"}`
	wantStatus(t, "insert", c.do("POST", "tab1", body, "Prefer", "return-no-content"), 204)
	c.accept = "application/json;odata=minimalmetadata"
	r := c.do("GET", "tab1(PartitionKey='p',RowKey='r')", "")
	wantStatus(t, "read", r, 200)
	for _, w := range []string{`"B":false`, `"C":true`, `"I":-32`,
		`"T@odata.type":"Edm.DateTime","T":"2023-01-01T23:00:00.0000000Z"`,
		`"U@odata.type":"Edm.DateTime","U":"2023-01-01T23:00:00.5000000Z"`} {
		if !strings.Contains(r.body, w) {
			t.Errorf("%s lacks %s", r.body, w)
		}
	}
	for _, tc := range []struct{ name, body string }{
		{"a Boolean that is not true or false", `{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Boolean","A":"yes"}`},
		{"an Int32 beyond its range", `{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Int32","A":"3000000000"}`},
		{"an Int32 that is not a number", `{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Int32","A":"1.5"}`},
		{"a date without a time", `{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.DateTime","A":"2023-01-01"}`},
	} {
		wantError(t, tc.name, c.do("POST", "tab1", tc.body), 400, "InvalidInput")
	}
}
