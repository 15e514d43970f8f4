package emulator

import (
	"strings"
	"time"
)

// A blobSAS is the shared access signature a blob request carries, once its signature,
// times, IP range and protocol have been checked: what it grants.
type blobSAS struct {
	account  bool   // an account SAS; otherwise a service SAS
	perms    string // sp
	types    string // srt, for an account SAS
	resource string // sr, for a service SAS: c (a container) or b (a blob)
	// The response headers a service SAS sets on a read (rscc, rscd, rsce, rscl, rsct).
	cacheControl, contentDisposition, contentEncoding, contentLanguage, contentType string
}

// authenticateSAS verifies the shared access signature in the request's query for the
// account, and the container and blob its URL names, and records what it grants in q.sas.
// An account SAS (ss, srt) and a service SAS (sr) are told apart by their fields. The
// strings to sign are the service's for versions 2015-04-05 and later:
//
//	account: account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n [ses \n, from 2020-12-06]
//	service: sp \n st \n se \n /blob/account/container[/blob] \n si \n sip \n spr \n sv \n
//	         [sr \n snapshot \n, from 2018-11-09] [ses \n, from 2020-12-06]
//	         rscc \n rscd \n rsce \n rscl \n rsct
//
// The service SAS's resource is the URL's container (sr=c) or blob (sr=b), so a SAS used
// on another container or blob does not verify. A SAS of a snapshot, a version or a
// directory (sr=bs, bv, d), or that names a stored access policy (si: the emulator keeps
// no container ACLs) fails with 403 AuthenticationFailed, as do a malformed SAS, a
// signature that does not verify and a time outside the SAS's window; an IP address
// outside sip, http where spr asks for https, and an account SAS without the blob service
// fail with the codes of the table SAS (authenticateSAS of package tables' requests).
func (q *blobRequest) authenticateSAS() error {
	v := q.query
	sig, sv, ok := readSAS(v)
	if !ok {
		return errAuthentication()
	}
	s := &blobSAS{perms: v.Get("sp")}
	var toSign string
	switch {
	case v.Has("ss") || v.Has("srt"):
		s.account, s.types = true, v.Get("srt")
		toSign = accountSASToSign(q.acct.name, v, sv)
	case v.Has("sr"):
		s.resource = v.Get("sr")
		_, rest := splitAccount(q.r.URL.Path)
		container, name, _ := strings.Cut(rest, "/")
		canonical := "/blob/" + q.acct.name + "/" + container
		switch {
		case s.resource == "c" && container != "":
		case s.resource == "b" && container != "" && name != "":
			canonical += "/" + name
		default:
			return errAuthentication()
		}
		fields := []string{s.perms, v.Get("st"), v.Get("se"), canonical, v.Get("si"), v.Get("sip"), v.Get("spr"), sv}
		if sv >= "2018-11-09" {
			fields = append(fields, s.resource, v.Get("snapshot"))
		}
		if sv >= "2020-12-06" {
			fields = append(fields, v.Get("ses"))
		}
		s.cacheControl, s.contentDisposition, s.contentEncoding = v.Get("rscc"), v.Get("rscd"), v.Get("rsce")
		s.contentLanguage, s.contentType = v.Get("rscl"), v.Get("rsct")
		fields = append(fields, s.cacheControl, s.contentDisposition, s.contentEncoding, s.contentLanguage, s.contentType)
		toSign = strings.Join(fields, "\n")
	default:
		return errAuthentication()
	}
	if !signedBy(q.acct.key, toSign, sig) {
		return errAuthentication()
	}
	if v.Get("si") != "" || s.perms == "" || v.Get("se") == "" || (s.account && (v.Get("ss") == "" || s.types == "")) {
		return errAuthentication()
	}
	if !inSASWindow(q.h.now(), v, time.Time{}, time.Time{}) {
		return errAuthentication()
	}
	if err := checkSASScope(q.r, v, s.account, "b"); err != nil {
		return err
	}
	q.sas = s
	return nil
}

// The levels an operation acts on, as an account SAS's resource types name them.
const (
	levelService   = "s"
	levelContainer = "c"
	levelObject    = "o"
)

// authorize checks that the request's SAS, if it has one, allows an operation on level
// that needs one of perms. The permissions are the service's (Create Account SAS, Create
// Service SAS):
//
//	operation                             account SAS (srt, sp)   service SAS (sp)
//	List Containers                       s, l                    none
//	Create Container                      c, c or w               none
//	Delete Container                      c, d                    none
//	Get Container Properties              c, r                    none
//	List Blobs                            c, l                    sr=c, l
//	Get Blob, properties, metadata,
//	  block list                          o, r                    r
//	Put Blob, Put Block List              o, w (c: a new blob)    w (c: a new blob)
//	Put Block                             o, w or c               w or c
//	Set Blob Properties, Metadata         o, w                    w
//	Delete Blob                           o, d                    d
//
// A resource type an account SAS lacks fails with 403 AuthorizationResourceTypeMismatch; a
// permission the SAS lacks, or an operation no permission of a service SAS grants, with
// 403 AuthorizationPermissionMismatch (as Azurite answers the latter; the service's answer
// is not documented).
func (q *blobRequest) authorize(level, perms string) error {
	s := q.sas
	if s == nil {
		return nil
	}
	if s.account {
		if !strings.Contains(s.types, level) {
			return errResourceType()
		}
	} else if level != levelObject && !(level == levelContainer && perms == "l" && s.resource == "c") {
		return errPermission()
	}
	if !strings.ContainsAny(s.perms, perms) {
		return errPermission()
	}
	return nil
}

// mayOverwrite reports whether the request's SAS, if any, allows replacing an existing
// blob: create (c) alone writes only new ones.
func (q *blobRequest) mayOverwrite() error {
	if q.sas != nil && !strings.Contains(q.sas.perms, "w") {
		return errPermission()
	}
	return nil
}

// overrideHeaders sets the response headers a service SAS asks a read to answer with.
func (q *blobRequest) overrideHeaders() {
	s := q.sas
	if s == nil || s.account {
		return
	}
	hdr := q.w.Header()
	for name, v := range map[string]string{
		"Cache-Control": s.cacheControl, "Content-Disposition": s.contentDisposition,
		"Content-Encoding": s.contentEncoding, "Content-Language": s.contentLanguage, "Content-Type": s.contentType,
	} {
		if v != "" {
			hdr.Set(name, v)
		}
	}
}
