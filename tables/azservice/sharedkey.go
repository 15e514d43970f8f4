package azservice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// sharedKeyLite signs each request with the account key, as aztables' shared-key credential
// does: the SharedKeyLite scheme of the table service, whose string to sign is the request's
// x-ms-date and its canonicalized resource ("/" + account + the URL's escaped path, plus
// "?comp=…" when the query names a component). It runs once per try (a per-retry policy);
// a retry keeps the first try's date.
type sharedKeyLite struct {
	account string
	macs    sync.Pool // of hash.Hash keyed with the account key
}

func newSharedKeyLite(account string, key []byte) *sharedKeyLite {
	return &sharedKeyLite{account: account, macs: sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

func (p *sharedKeyLite) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	date := raw.Header.Get("x-ms-date")
	if date == "" {
		date = time.Now().UTC().Format(http.TimeFormat)
		raw.Header.Set("x-ms-date", date)
	}
	raw.Header.Set("Authorization", p.authorization(date, raw))
	return req.Next()
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
