package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/inmemory/memservice"
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

// tableACLs holds an account's stored access policies, by lower-case table name. With a
// data directory they are also in the account's file acl.json, replaced whole (written to a
// temporary file, fsynced and renamed over it) before a change is acknowledged.
type tableACLs struct {
	mu     sync.Mutex
	tables map[string][]storedPolicy
	file   string // the acl.json of the account's directory, or ""
}

// The file of the account's directory that holds its stored access policies, and the
// temporary file a new version is written to.
const (
	aclName     = "acl.json"
	aclTempName = "acl.json.tmp"
)

// aclFile is acl.json: each table's policies, times in RFC 3339 (absent when the policy
// leaves them to the SAS).
type aclFile struct {
	Tables map[string][]aclFilePolicy `json:"tables"`
}

type aclFilePolicy struct {
	ID     string     `json:"id"`
	Start  *time.Time `json:"start,omitempty"`
	Expiry *time.Time `json:"expiry,omitempty"`
	Perms  string     `json:"permission,omitempty"`
}

// load reads the account's acl.json in dir, if there is one, keeping the policies of the
// tables svc holds (a crash can leave those of a table deleted just before), and makes
// later changes go to it. A file it cannot read is a *CorruptError.
func (a *tableACLs) load(dir string, svc *memservice.Service) error {
	a.file = filepath.Join(dir, aclName)
	if err := os.Remove(filepath.Join(dir, aclTempName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	data, err := os.ReadFile(a.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	var f aclFile
	if err := json.Unmarshal(data, &f); err != nil {
		return &CorruptError{File: a.file, Offset: 0, Reason: "the stored access policies do not decode: " + err.Error()}
	}
	for table, ps := range f.Tables {
		ok, err := svc.TableExists(context.Background(), table)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if a.tables == nil {
			a.tables = make(map[string][]storedPolicy)
		}
		for _, p := range ps {
			sp := storedPolicy{id: p.ID, perms: p.Perms}
			if p.Start != nil {
				sp.start = *p.Start
			}
			if p.Expiry != nil {
				sp.expiry = *p.Expiry
			}
			a.tables[table] = append(a.tables[table], sp)
		}
	}
	return nil
}

// save writes the policies to acl.json, durably, when there is a data directory. The
// caller holds mu.
func (a *tableACLs) save() error {
	if a.file == "" {
		return nil
	}
	f := aclFile{Tables: map[string][]aclFilePolicy{}}
	for table, ps := range a.tables {
		for _, p := range ps {
			fp := aclFilePolicy{ID: p.id, Perms: p.perms}
			if !p.start.IsZero() {
				fp.Start = &p.start
			}
			if !p.expiry.IsZero() {
				fp.Expiry = &p.expiry
			}
			f.Tables[table] = append(f.Tables[table], fp)
		}
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	dir := filepath.Dir(a.file)
	tmp := filepath.Join(dir, aclTempName)
	w, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.file)
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
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
func (a *tableACLs) drop(table string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := strings.ToLower(table)
	if _, ok := a.tables[key]; !ok {
		return nil
	}
	delete(a.tables, key)
	return a.save()
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
	var saveErr error
	ok, err := q.acct.svc.TableExists(q.r.Context(), table)
	if err == nil && ok {
		if acls.tables == nil {
			acls.tables = make(map[string][]storedPolicy)
		}
		key := strings.ToLower(table)
		old, had := acls.tables[key]
		acls.tables[key] = policies
		if saveErr = acls.save(); saveErr != nil { // not acknowledged: as it was
			if had {
				acls.tables[key] = old
			} else {
				delete(acls.tables, key)
			}
		}
	}
	acls.mu.Unlock()
	if err != nil {
		q.fail(err)
		return
	}
	if saveErr != nil {
		q.h.logFault(q.id, "the stored access policies could not be saved: "+saveErr.Error())
		q.fail(saveErr) // a 500 InternalError
		return
	}
	if !ok {
		q.fail(errTableNotFound())
		return
	}
	q.w.WriteHeader(http.StatusNoContent)
}
