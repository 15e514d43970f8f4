package azservice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"sync"
	"time"
)

// sharedKeyLite signs each request with the account key, as aztables' shared-key credential
// does: the SharedKeyLite scheme of the table service, whose string to sign is the request's
// x-ms-date and its canonicalized resource ("/" + account + the URL's escaped path, plus
// "?comp=…" when the query names a component). The row client signs every try with it
// (eachTry); a retry keeps the first try's date.
type sharedKeyLite struct {
	account string
	macs    sync.Pool // of hash.Hash keyed with the account key
}

func newSharedKeyLite(account string, key []byte) *sharedKeyLite {
	return &sharedKeyLite{account: account, macs: sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// signRequest dates the request (unless an earlier try did) and signs it. The header names
// are written in their canonical form, as Header.Set would write them, without the lookup
// that canonicalizes them.
func (p *sharedKeyLite) signRequest(raw *http.Request) {
	var date string
	if d := raw.Header["X-Ms-Date"]; len(d) > 0 {
		date = d[0]
	} else {
		date = time.Now().UTC().Format(http.TimeFormat)
		raw.Header["X-Ms-Date"] = []string{date}
	}
	raw.Header["Authorization"] = []string{p.authorization(date, raw)}
}

// authorization returns the Authorization header of a request made at date.
func (p *sharedKeyLite) authorization(date string, r *http.Request) string {
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	var stack [256]byte // the string to sign of a typical row request fits
	buf := append(stack[:0], date...)
	buf = append(buf, "\n/"...)
	buf = append(buf, p.account...)
	buf = append(buf, path...)
	if r.URL.RawQuery != "" {
		if comp := r.URL.Query()["comp"]; len(comp) > 0 {
			buf = append(buf, "?comp="...)
			buf = append(buf, comp[0]...)
		}
	}
	mac := p.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(buf)
	var sum [sha256.Size]byte
	var sig [44]byte // base64 of 32 bytes
	base64.StdEncoding.Encode(sig[:], mac.Sum(sum[:0]))
	p.macs.Put(mac)
	return "SharedKeyLite " + p.account + ":" + string(sig[:])
}
