package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"
)

// maxClockSkew is how far a request's date may be from the emulator's clock, as on the
// service.
const maxClockSkew = 15 * time.Minute

// authenticate checks the request's Shared Key or Shared Key Lite signature, or its shared
// access signature (authenticateSAS), against the key of the account its URL names. The table service's strings to sign are
//
//	Shared Key:      VERB \n Content-MD5 \n Content-Type \n date \n resource
//	Shared Key Lite: date \n resource
//
// where date is x-ms-date when present, else Date, and resource is "/" + account + the URL's
// escaped path, followed by "?comp=…" when the query names a component. Clients disagree on
// whether a path-style URL's path keeps the account, so both forms verify; and since Azurite
// signs a Shared Key request with Date before x-ms-date, either date verifies.
func (q *request) authenticate() error {
	if q.acct == nil {
		return errAuthentication()
	}
	if isSAS(q.r) {
		return q.authenticateSAS()
	}
	auth := q.r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok {
		return errAuthentication()
	}
	name, sig, ok := strings.Cut(cred, ":")
	if !ok || name != q.acct.name {
		return errAuthentication()
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errAuthentication()
	}
	xdate, date := q.r.Header.Get("x-ms-date"), q.r.Header.Get("Date")
	when := xdate
	if when == "" {
		when = date
	}
	t, err := http.ParseTime(when)
	if err != nil {
		return errAuthentication()
	}
	if d := q.h.now().Sub(t); d > maxClockSkew || d < -maxClockSkew {
		return errAuthentication()
	}
	dates := []string{xdate, date}
	for _, res := range q.canonicalResources() {
		for _, d := range dates {
			if d == "" {
				continue
			}
			var toSign string
			switch scheme {
			case "SharedKey":
				toSign = q.r.Method + "\n" + q.r.Header.Get("Content-MD5") + "\n" + q.r.Header.Get("Content-Type") + "\n" + d + "\n" + res
			case "SharedKeyLite":
				toSign = d + "\n" + res
			default:
				return errAuthentication()
			}
			mac := hmac.New(sha256.New, q.acct.key)
			mac.Write([]byte(toSign))
			if hmac.Equal(mac.Sum(nil), got) {
				return nil
			}
		}
	}
	return errAuthentication()
}

// canonicalResources returns the canonicalized resources the request may have been signed
// with: the account and the whole path, and the account and the path after the account.
func (q *request) canonicalResources() []string {
	path := q.r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	comp := ""
	if c := q.r.URL.Query()["comp"]; len(c) > 0 {
		comp = "?comp=" + c[0]
	}
	full := "/" + q.acct.name + path + comp
	if rest, ok := strings.CutPrefix(path, "/"+q.acct.name); ok {
		if rest == "" {
			rest = "/"
		}
		return []string{full, "/" + q.acct.name + rest + comp}
	}
	return []string{full}
}
