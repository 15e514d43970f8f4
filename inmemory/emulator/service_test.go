package emulator

import "testing"

// Set Service Properties sends XML, as the operations named by comp and restype do: the
// emulator answers that it does not implement the operation, not that the body's format is
// refused.
func TestXMLBodyOfUnimplementedOperation(t *testing.T) {
	c := devClient(t, server(t, nil))
	body := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties></StorageServiceProperties>`
	wantError(t, "Set Service Properties", c.do("PUT", "?restype=service&comp=properties", body, "Content-Type", "application/xml"), 501, "NotImplemented")
	wantError(t, "an AtomPub entry still", c.do("POST", "Tables", "<entry/>", "Content-Type", "application/atom+xml"), 415, "AtomFormatNotSupported")
}

// A request whose x-ms-version is not a version is refused as the service refuses it.
func TestInvalidVersion(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantError(t, "x-ms-version invalid", c.do("POST", "Tables", `{"TableName":"tab1"}`, "x-ms-version", "invalid"), 400, "InvalidHeaderValue")
	wantError(t, "nothing was created", c.do("GET", "Tables('tab1')", ""), 404, "ResourceNotFound")
	wantStatus(t, "x-ms-version 2025-11-05", c.do("POST", "Tables", `{"TableName":"tab1"}`, "x-ms-version", "2025-11-05"), 201)
}
