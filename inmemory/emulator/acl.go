package emulator

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxPolicies is the most stored access policies a table holds, and maxPolicyID the
// longest identifier of one, as on the service.
const (
	maxPolicies = 5
	maxPolicyID = 64
)

// A storedPolicy is one of a table's stored access policies: what a SAS naming it (si)
// takes from it. A zero time or empty permissions leaves that field to the SAS.
type storedPolicy struct {
	id            string
	start, expiry time.Time
	perms         string
}

// tableACLs holds an account's stored access policies, by lower-case table name. They live
// in memory only: a data directory does not keep them.
type tableACLs struct {
	mu     sync.Mutex
	tables map[string][]storedPolicy
}

// policy returns the policy id of table.
func (a *tableACLs) policy(table, id string) (storedPolicy, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.tables[strings.ToLower(table)] {
		if p.id == id {
			return p, true
		}
	}
	return storedPolicy{}, false
}

// drop forgets the policies of a table that was deleted: a table made again under its
// name starts without any.
func (a *tableACLs) drop(table string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tables, strings.ToLower(table))
}

// resource reads the request's resource: parseResource's, or a table's ACL when the query
// asks for comp=acl.
func (q *request) resource(rest string) (resource, error) {
	res, err := parseResource(rest)
	if err == nil && res.kind == resEntities && q.r.URL.Query().Get("comp") == "acl" {
		res.kind = resACL
	}
	return res, err
}

// The XML body of Get Table ACL and Set Table ACL.
type signedIdentifiersXML struct {
	XMLName     xml.Name              `xml:"SignedIdentifiers"`
	Identifiers []signedIdentifierXML `xml:"SignedIdentifier"`
}

type signedIdentifierXML struct {
	ID     string           `xml:"Id"`
	Policy *accessPolicyXML `xml:"AccessPolicy"`
}

type accessPolicyXML struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

// policyTimeLayout is how Get Table ACL writes a policy's times, as the service does.
const policyTimeLayout = "2006-01-02T15:04:05.0000000Z"

func errTableNotFound() error {
	return statusError(http.StatusNotFound, "TableNotFound", "The table specified does not exist.")
}

func errInvalidXML() error {
	return statusError(http.StatusBadRequest, "InvalidXmlDocument", "XML specified is not syntactically valid.")
}

// getACL answers Get Table ACL: the table's stored access policies, in the order they were
// set.
func (q *request) getACL(table string) {
	acls := &q.acct.acls
	acls.mu.Lock()
	ok, err := q.acct.svc.TableExists(q.r.Context(), table)
	policies := acls.tables[strings.ToLower(table)]
	acls.mu.Unlock()
	if err != nil {
		q.fail(err)
		return
	}
	if !ok {
		q.fail(errTableNotFound())
		return
	}
	var doc signedIdentifiersXML
	for _, p := range policies {
		ap := &accessPolicyXML{Permission: p.perms}
		if !p.start.IsZero() {
			ap.Start = p.start.UTC().Format(policyTimeLayout)
		}
		if !p.expiry.IsZero() {
			ap.Expiry = p.expiry.UTC().Format(policyTimeLayout)
		}
		doc.Identifiers = append(doc.Identifiers, signedIdentifierXML{ID: p.id, Policy: ap})
	}
	body, _ := xml.Marshal(doc)
	body = append([]byte(xml.Header[:len(xml.Header)-1]), body...)
	hdr := q.w.Header()
	hdr.Set("Content-Type", "application/xml")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(body)
}

// setACL answers Set Table ACL: the body's policies replace the table's (an empty body
// removes them). A body that is not the service's XML, more than five policies, an
// identifier that is empty or longer than 64 characters, a time that is not ISO 8601, or a
// permission other than r, a, u and d, fails with 400 InvalidXmlDocument.
func (q *request) setACL(table string) {
	var doc signedIdentifiersXML
	if len(bytes.TrimSpace(q.body)) > 0 {
		if err := xml.Unmarshal(q.body, &doc); err != nil {
			q.fail(errInvalidXML())
			return
		}
	}
	if len(doc.Identifiers) > maxPolicies {
		q.fail(errInvalidXML())
		return
	}
	var policies []storedPolicy
	for _, si := range doc.Identifiers {
		p := storedPolicy{id: si.ID}
		if p.id == "" || len(p.id) > maxPolicyID {
			q.fail(errInvalidXML())
			return
		}
		if ap := si.Policy; ap != nil {
			var ok bool
			if ap.Start != "" {
				if p.start, ok = parseSASTime(ap.Start); !ok {
					q.fail(errInvalidXML())
					return
				}
			}
			if ap.Expiry != "" {
				if p.expiry, ok = parseSASTime(ap.Expiry); !ok {
					q.fail(errInvalidXML())
					return
				}
			}
			if strings.Trim(ap.Permission, "raud") != "" {
				q.fail(errInvalidXML())
				return
			}
			p.perms = ap.Permission
		}
		policies = append(policies, p)
	}
	// The table is looked up under the lock that drop takes after a table is deleted, so
	// policies are never left behind for a table that is gone.
	acls := &q.acct.acls
	acls.mu.Lock()
	ok, err := q.acct.svc.TableExists(q.r.Context(), table)
	if err == nil && ok {
		if acls.tables == nil {
			acls.tables = make(map[string][]storedPolicy)
		}
		acls.tables[strings.ToLower(table)] = policies
	}
	acls.mu.Unlock()
	if err != nil {
		q.fail(err)
		return
	}
	if !ok {
		q.fail(errTableNotFound())
		return
	}
	q.w.WriteHeader(http.StatusNoContent)
}
