package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// authenticate checks the request's Shared Key or Shared Key Lite signature against the key
// of the account its URL names. The Blob service's strings to sign are
//
//	Shared Key:      VERB \n Content-Encoding \n Content-Language \n Content-Length \n
//	                 Content-MD5 \n Content-Type \n Date \n If-Modified-Since \n If-Match \n
//	                 If-None-Match \n If-Unmodified-Since \n Range \n headers resource
//	Shared Key Lite: VERB \n Content-MD5 \n Content-Type \n Date \n headers resource
//
// where Content-Length is empty when zero, headers are the x-ms-* headers, each
// "name:value\n" with the name in lower case, in name order, and resource is "/" + account
// + the URL's escaped path followed, for Shared Key, by each query parameter on a line of
// its own ("\nname:v1,v2", names in lower case and in order, values in order) and, for
// Shared Key Lite, by "?comp=…" alone. As for tables, a path-style URL's path verifies with
// and without the account. The request's date (x-ms-date, else Date) must be within 15
// minutes of the emulator's clock. A request without an Authorization header but with a
// shared access signature is checked by authenticateSAS.
func (q *blobRequest) authenticate() error {
	if q.acct == nil {
		return errAuthentication()
	}
	if isSAS(q.r) {
		return q.authenticateSAS()
	}
	scheme, cred, ok := strings.Cut(q.r.Header.Get("Authorization"), " ")
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
	when := q.r.Header.Get("x-ms-date")
	if when == "" {
		when = q.r.Header.Get("Date")
	}
	t, err := http.ParseTime(when)
	if err != nil {
		return errAuthentication()
	}
	if d := q.h.now().Sub(t); d > maxClockSkew || d < -maxClockSkew {
		return errAuthentication()
	}
	for _, path := range blobPaths(q.acct.name, q.r.URL) {
		var toSign string
		switch scheme {
		case "SharedKey":
			toSign = blobStringToSign(q.r, q.acct.name, path)
		case "SharedKeyLite":
			toSign = blobStringToSignLite(q.r, q.acct.name, path)
		default:
			return errAuthentication()
		}
		mac := hmac.New(sha256.New, q.acct.key)
		mac.Write([]byte(toSign))
		if hmac.Equal(mac.Sum(nil), got) {
			return nil
		}
	}
	return errAuthentication()
}

// blobPaths returns the escaped paths a request to u may have been signed with: the whole
// path, and the path after the account.
func blobPaths(acct string, u *url.URL) []string {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if rest, ok := strings.CutPrefix(path, "/"+acct); ok && (rest == "" || rest[0] == '/') {
		if rest == "" {
			rest = "/"
		}
		return []string{path, rest}
	}
	return []string{path}
}

// blobStringToSign is the Shared Key string to sign of r with the escaped path path.
func blobStringToSign(r *http.Request, acct, path string) string {
	length := ""
	if r.ContentLength > 0 {
		length = strconv.FormatInt(r.ContentLength, 10)
	}
	h := r.Header
	var b strings.Builder
	for _, v := range []string{
		r.Method, h.Get("Content-Encoding"), h.Get("Content-Language"), length,
		h.Get("Content-MD5"), h.Get("Content-Type"), h.Get("Date"), h.Get("If-Modified-Since"),
		h.Get("If-Match"), h.Get("If-None-Match"), h.Get("If-Unmodified-Since"), h.Get("Range"),
	} {
		b.WriteString(v)
		b.WriteByte('\n')
	}
	b.WriteString(canonicalHeaders(h))
	b.WriteString("/" + acct + path)
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	lower := make(map[string][]string, len(q))
	for name, vs := range q {
		l := strings.ToLower(name)
		if _, seen := lower[l]; !seen {
			names = append(names, l)
		}
		lower[l] = append(lower[l], vs...)
	}
	slices.Sort(names)
	for _, name := range names {
		vs := slices.Clone(lower[name])
		slices.Sort(vs)
		b.WriteString("\n" + name + ":" + strings.Join(vs, ","))
	}
	return b.String()
}

// blobStringToSignLite is the Shared Key Lite string to sign of r with the escaped path path.
func blobStringToSignLite(r *http.Request, acct, path string) string {
	h := r.Header
	s := r.Method + "\n" + h.Get("Content-MD5") + "\n" + h.Get("Content-Type") + "\n" + h.Get("Date") + "\n" +
		canonicalHeaders(h) + "/" + acct + path
	if c := r.URL.Query()["comp"]; len(c) > 0 {
		s += "?comp=" + c[0]
	}
	return s
}

// canonicalHeaders returns the request's x-ms-* headers as the strings to sign hold them.
func canonicalHeaders(h http.Header) string {
	var names []string
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-ms-") {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	var b strings.Builder
	for _, name := range names {
		b.WriteString(strings.ToLower(name) + ":" + strings.TrimSpace(strings.Join(h[name], ",")) + "\n")
	}
	return b.String()
}
