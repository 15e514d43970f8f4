package azconn

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// defaultMaxIdleConnsPerHost is how many idle keep-alive connections per host the transport
// the library builds keeps (Options.ClientOptions.Transport unset). The Azure SDK's own
// default keeps 10: a server whose requests run more than 10 at a time against one account
// then closes and reopens connections all the time, leaving thousands of sockets in
// TIME_WAIT. Size it to the number of calls you run at once; to change it, set
// ClientOptions.Transport to an *http.Client over a transport of your own.
const defaultMaxIdleConnsPerHost = 128

// defaultTransport is shared by every account that does not bring its own, as the SDK's
// default one is: connections to one endpoint are reused across accounts.
var defaultTransport = &http.Client{Transport: &http.Transport{
	Proxy: http.ProxyFromEnvironment,
	DialContext: (&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
	}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          4 * defaultMaxIdleConnsPerHost,
	MaxIdleConnsPerHost:   defaultMaxIdleConnsPerHost,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: time.Second,
	TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
}}

// WithDefaultTransport returns the client options with the library's transport when none
// is set.
func WithDefaultTransport(co azcore.ClientOptions) azcore.ClientOptions {
	if co.Transport == nil {
		co.Transport = defaultTransport
	}
	return co
}
