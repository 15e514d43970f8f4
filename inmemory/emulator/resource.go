package emulator

import (
	"mime"
	"net/url"
	"strings"
)

type resourceKind uint8

const (
	resService  resourceKind = iota + 1 // the account itself (service properties, stats)
	resBatch                            // $batch
	resTables                           // Tables
	resTable                            // Tables('name')
	resEntities                         // name or name()
	resEntity                           // name(PartitionKey='…',RowKey='…')
	resACL                              // name?comp=acl: the table's stored access policies
)

// A resource is what a request's path names.
type resource struct {
	kind   resourceKind
	table  string
	pk, rk string
}

// parseResource reads the path after the account: the resource and, for an entity, its keys
// (with doubled quotes undone).
func parseResource(escaped string) (resource, error) {
	path, err := url.PathUnescape(escaped)
	if err != nil {
		return resource{}, errInvalidURI()
	}
	if path == "" {
		return resource{kind: resService}, nil
	}
	if path == "$batch" {
		return resource{kind: resBatch}, nil
	}
	name, args, paren := strings.Cut(path, "(")
	if strings.ContainsAny(name, "/'") || name == "" {
		return resource{}, errInvalidURI()
	}
	if !paren {
		if strings.EqualFold(name, "Tables") {
			return resource{kind: resTables}, nil
		}
		return resource{kind: resEntities, table: name}, nil
	}
	args, ok := strings.CutSuffix(args, ")")
	if !ok {
		return resource{}, errInvalidURI()
	}
	if strings.EqualFold(name, "Tables") {
		if args == "" {
			return resource{kind: resTables}, nil
		}
		t, rest, ok := quoted(args)
		if !ok || rest != "" {
			return resource{}, errInvalidURI()
		}
		return resource{kind: resTable, table: t}, nil
	}
	if args == "" {
		return resource{kind: resEntities, table: name}, nil
	}
	res := resource{kind: resEntity, table: name}
	var havePK, haveRK bool
	for args != "" {
		key, rest, ok := strings.Cut(args, "=")
		if !ok {
			return resource{}, errInvalidURI()
		}
		v, rest, ok := quoted(rest)
		if !ok {
			return resource{}, errInvalidURI()
		}
		switch {
		case key == "PartitionKey" && !havePK:
			res.pk, havePK = v, true
		case key == "RowKey" && !haveRK:
			res.rk, haveRK = v, true
		default:
			return resource{}, errInvalidURI()
		}
		if rest != "" {
			if rest, ok = strings.CutPrefix(rest, ","); !ok || rest == "" {
				return resource{}, errInvalidURI()
			}
		}
		args = rest
	}
	if !havePK || !haveRK {
		return resource{}, errInvalidURI()
	}
	return res, nil
}

// quoted reads an OData string literal at the start of s ('…' with ” for a quote) and
// returns its text and what follows it.
func quoted(s string) (text, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// queryOptions are the query parameters each resource reads; every other parameter whose
// name starts with $ is an OData option the emulator does not implement.
var queryOptions = map[resourceKind][]string{
	resTables:   {"$filter", "$top", "$select", "NextTableName"},
	resEntities: {"$filter", "$select", "$top", "NextPartitionKey", "NextRowKey"},
	resEntity:   {"$select"},
}

// checkQuery refuses a query parameter the emulator does not implement for the resource,
// and reads the metadata level the response is to have.
func (q *request) checkQuery(res resource) error {
	for name := range q.r.URL.Query() {
		switch {
		case name == "$format" || name == "timeout":
		case name == "comp" && res.kind == resACL:
		case name == "comp" || name == "restype":
			return errNotImplemented(name + "=" + q.r.URL.Query().Get(name))
		case strings.HasPrefix(name, "$"):
			known := false
			for _, o := range queryOptions[res.kind] {
				known = known || o == name
			}
			if !known {
				return errNotImplemented("the query option " + name + " here")
			}
		}
	}
	return nil
}

// Metadata levels of a JSON response.
type metadata uint8

const (
	noMetadata metadata = iota + 1
	minimalMetadata
	fullMetadata
)

// metadataLevel reads the response format the request asks for, from $format or Accept.
// JSON without an odata parameter, or any type, is minimal metadata; AtomPub and XML, which
// the service no longer speaks at the versions clients send, fail with 415
// AtomFormatNotSupported.
func (q *request) metadataLevel() (metadata, error) {
	accept := q.r.URL.Query().Get("$format")
	if accept == "" {
		accept = q.r.Header.Get("Accept")
	}
	if strings.TrimSpace(accept) == "" {
		return minimalMetadata, nil
	}
	anyType := false
	for _, rng := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json":
			switch params["odata"] {
			case "nometadata":
				return noMetadata, nil
			case "", "minimalmetadata":
				return minimalMetadata, nil
			case "fullmetadata":
				return fullMetadata, nil
			default:
				return 0, errBadQueryValue("odata")
			}
		case "*/*", "application/*":
			anyType = true
		}
	}
	if anyType {
		return minimalMetadata, nil
	}
	return 0, errAtom()
}

// checkContentType refuses a request body that is not JSON (an AtomPub entry). The bodies of
// the operations named by comp or restype (service properties, table ACLs) are XML by
// definition; those requests are answered by route, which refuses what is not implemented.
func (q *request) checkContentType() error {
	ct := q.r.Header.Get("Content-Type")
	if len(q.body) == 0 || ct == "" {
		return nil
	}
	if v := q.r.URL.Query(); v.Has("comp") || v.Has("restype") {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/atom+xml" || mt == "application/xml") {
		return errAtom()
	}
	return nil
}
