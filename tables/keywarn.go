package tables

import (
	"github.com/unified-data/gotables/tables/internal/azconn"
)

// warnKeyInClear logs a warning through the account's logger when a connection string's
// shared key signs requests that travel over plain HTTP to a host that is not a loopback
// one. The emulator on 127.0.0.1 or localhost is not warned about. blobURL is the endpoint
// of the account's blob service ("" without one): the connection string's key signs its
// requests only when it is the connection string's blob endpoint (not another account's,
// given by azblobs.ConnectTo).
func warnKeyInClear(acct *Account, conn string, blobURL string) {
	cs, err := azconn.Parse(conn)
	if err != nil {
		return
	}
	for _, ep := range []struct{ which, url string }{{"table", cs.TableURL}, {"blob", cs.BlobURL}} {
		if ep.which == "blob" && (blobURL == "" || blobURL != cs.BlobURL) {
			continue
		}
		if azconn.KeyInClear(cs, ep.url) {
			acct.e.Logger().Warn("unified tables: the account's shared key signs requests sent over plain HTTP to a host that is not loopback; "+
				"anyone on the way can read them: use https (DefaultEndpointsProtocol=https)", "service", ep.which, "endpoint", ep.url)
		}
	}
}
