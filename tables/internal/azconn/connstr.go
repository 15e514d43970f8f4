package azconn

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// The Azure SDK's connection-string parsers do not understand UseDevelopmentStorage=true,
// and the table one ignores TableEndpoint when a SharedAccessSignature is given. This
// parser handles both, builds both services' endpoints, and never puts a setting's value
// in an error (the key and the signature are secrets).

// Storage emulator (Azurite) defaults: the well-known development account, published in
// the emulator's documentation.
const (
	DevAccountName = "devstoreaccount1"
	DevAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	DevBlobURL     = "http://127.0.0.1:10000/devstoreaccount1"
	DevTableURL    = "http://127.0.0.1:10002/devstoreaccount1"
)

// DevConnectionString is what UseDevelopmentStorage=true stands for.
const DevConnectionString = "DefaultEndpointsProtocol=http;AccountName=" + DevAccountName +
	";AccountKey=" + DevAccountKey + ";BlobEndpoint=" + DevBlobURL + ";TableEndpoint=" + DevTableURL + ";"

// Settings is a parsed connection string.
type Settings struct {
	AccountName string
	AccountKey  string // base64, as given; empty with a SAS
	SAS         string // without the leading '?'
	TableURL    string // empty: no table service
	BlobURL     string // empty: no blob service
}

// settingNames maps the lower-cased setting names this parser knows to their usual
// spelling, the only form in which an error names a setting.
var settingNames = map[string]string{
	"usedevelopmentstorage":      "UseDevelopmentStorage",
	"developmentstorageproxyuri": "DevelopmentStorageProxyUri",
	"defaultendpointsprotocol":   "DefaultEndpointsProtocol",
	"accountname":                "AccountName",
	"accountkey":                 "AccountKey",
	"sharedaccesssignature":      "SharedAccessSignature",
	"endpointsuffix":             "EndpointSuffix",
	"tableendpoint":              "TableEndpoint",
	"blobendpoint":               "BlobEndpoint",
	"queueendpoint":              "QueueEndpoint",
	"fileendpoint":               "FileEndpoint",
}

// invalidInURL reports a character that a URL cannot carry unescaped.
func invalidInURL(r rune) bool {
	return r <= ' ' || r == 0x7f || r == '#'
}

// ErrConnString prefixes every connection-string error.
var ErrConnString = fmt.Errorf("%w: invalid connection string", abstractions.ErrInvalidArgument)

// Parse reads the settings of an Azure Storage connection string
// ("Name=value;Name=value"). Setting names are matched without regard to case, as the
// .NET parser does.
//
// Endpoints: an explicit TableEndpoint or BlobEndpoint is used as given. A service without
// one gets the default endpoint <protocol>://<account>.<service>.<suffix> when the string
// names no explicit endpoint at all or names DefaultEndpointsProtocol; otherwise that
// service is not configured. So "AccountName=…;AccountKey=…;TableEndpoint=…" has no blob
// service.
func Parse(conn string) (Settings, error) {
	var cs Settings
	// An unknown name is never quoted back: a stray copy of the key or the signature
	// ("…;AccountKey=K;K") would otherwise land in the error. Errors name a recognised
	// setting by its name and any other one by its position.
	settings := map[string]string{}
	for n, part := range strings.Split(conn, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return cs, fmt.Errorf("%w: setting %d has no '='", ErrConnString, n+1)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		display, known := settingNames[name]
		if !known {
			return cs, fmt.Errorf("%w: setting %d has an unknown name", ErrConnString, n+1)
		}
		if _, dup := settings[name]; dup {
			return cs, fmt.Errorf("%w: %s appears twice", ErrConnString, display)
		}
		settings[name] = strings.TrimSpace(value)
	}
	if len(settings) == 0 {
		return cs, fmt.Errorf("%w: it is empty", ErrConnString)
	}
	if dev, ok := settings["usedevelopmentstorage"]; ok {
		if !strings.EqualFold(dev, "true") {
			return cs, fmt.Errorf("%w: UseDevelopmentStorage only accepts the value true", ErrConnString)
		}
		for name := range settings {
			if name != "usedevelopmentstorage" && name != "developmentstorageproxyuri" {
				return cs, fmt.Errorf("%w: UseDevelopmentStorage=true cannot be combined with other settings (found %s)", ErrConnString, settingNames[name])
			}
		}
		if _, ok := settings["developmentstorageproxyuri"]; ok {
			return cs, fmt.Errorf("%w: DevelopmentStorageProxyUri is not supported", ErrConnString)
		}
		return Parse(DevConnectionString)
	}

	cs.AccountName = settings["accountname"]
	if _, named := settings["accountname"]; named && !accountNameRE.MatchString(cs.AccountName) {
		// The name becomes the host of a derived endpoint and the signer of a shared key:
		// a host, port, path or query in it would send signed requests elsewhere.
		return cs, fmt.Errorf("%w: AccountName is not an account name (lower-case letters, digits and inner hyphens, at most 63)", ErrConnString)
	}
	key, hasKey := settings["accountkey"]
	sas, hasSAS := settings["sharedaccesssignature"]
	switch {
	case hasKey && hasSAS:
		return cs, fmt.Errorf("%w: AccountKey and SharedAccessSignature exclude each other", ErrConnString)
	case hasKey:
		if cs.AccountName == "" {
			return cs, fmt.Errorf("%w: AccountKey needs AccountName", ErrConnString)
		}
		if k, err := base64.StdEncoding.DecodeString(key); err != nil || len(k) == 0 {
			return cs, fmt.Errorf("%w: AccountKey is not valid base64", ErrConnString)
		}
		cs.AccountKey = key
	case hasSAS:
		cs.SAS = strings.TrimPrefix(sas, "?")
		if cs.SAS == "" {
			return cs, fmt.Errorf("%w: SharedAccessSignature is empty", ErrConnString)
		}
		// A signature the URL parser would refuse would otherwise fail later, in an SDK
		// error that quotes the whole URL, signature included.
		if _, err := url.ParseQuery(cs.SAS); err != nil || strings.ContainsFunc(cs.SAS, invalidInURL) {
			return cs, fmt.Errorf("%w: SharedAccessSignature is not a valid URL query", ErrConnString)
		}
	default:
		return cs, fmt.Errorf("%w: it needs AccountKey (with AccountName) or SharedAccessSignature", ErrConnString)
	}

	protocol, hasProtocol := settings["defaultendpointsprotocol"]
	if !hasProtocol {
		protocol = "https"
	}
	protocol = strings.ToLower(protocol)
	if protocol != "https" && protocol != "http" {
		return cs, fmt.Errorf("%w: DefaultEndpointsProtocol must be http or https", ErrConnString)
	}
	suffix, ok := settings["endpointsuffix"]
	if !ok || suffix == "" {
		suffix = "core.windows.net"
	}
	if !isHostName(suffix) {
		return cs, fmt.Errorf("%w: EndpointSuffix is not a host name (such as core.windows.net, without a scheme, port, path or query)", ErrConnString)
	}
	_, hasTable := settings["tableendpoint"]
	_, hasBlob := settings["blobendpoint"]
	derive := hasProtocol || !hasTable && !hasBlob
	endpoint := func(setting, service string) (string, error) {
		if v, ok := settings[strings.ToLower(setting)]; ok {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return "", fmt.Errorf("%w: %s is not an http or https URL", ErrConnString, setting)
			}
			if u.User != nil {
				return "", fmt.Errorf("%w: %s must not carry user information (credentials go in AccountKey or SharedAccessSignature)", ErrConnString, setting)
			}
			if u.RawQuery != "" || u.Fragment != "" {
				return "", fmt.Errorf("%w: %s must not carry a query or fragment (put a SAS in SharedAccessSignature)", ErrConnString, setting)
			}
			return strings.TrimRight(v, "/"), nil
		}
		if !derive {
			return "", nil
		}
		if cs.AccountName == "" {
			return "", fmt.Errorf("%w: AccountName or %s is required", ErrConnString, setting)
		}
		return protocol + "://" + cs.AccountName + "." + service + "." + suffix, nil
	}
	var err error
	if cs.TableURL, err = endpoint("TableEndpoint", "table"); err != nil {
		return cs, err
	}
	// An Azure Cosmos DB for Table account has no blob service: a blob endpoint derived from
	// its name would be a storage account's of the same name, someone else's.
	if hasBlob || ProductOf(cs.TableURL) != service.Cosmos {
		if cs.BlobURL, err = endpoint("BlobEndpoint", "blob"); err != nil {
			return cs, err
		}
	}
	return cs, nil
}

// accountNameRE admits the names of storage accounts (3 to 24 lower-case letters and
// digits) and of Azure Cosmos DB accounts (which add inner hyphens): one DNS label in lower
// case. A dot, colon, slash, question mark or at sign, which would move a derived endpoint
// to another host, port or path, never passes.
var accountNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// isHostName reports whether s is a DNS host name: dot-separated labels of letters, digits
// and inner hyphens, each at most 63 bytes, at most 253 bytes in all.
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// KeyInClear reports whether a shared key would sign requests sent over plain HTTP to a
// host other than a loopback one, where anyone on the path can read and replay them.
func KeyInClear(cs Settings, endpoint string) bool {
	if cs.AccountKey == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// NoEndpoint is the error of a connection string that names no endpoint for a service a
// constructor needs ("table" or "blob").
func NoEndpoint(service string) error {
	setting := map[string]string{"table": "TableEndpoint", "blob": "BlobEndpoint"}[service]
	return fmt.Errorf("%w: it names no %s endpoint (give %s, or AccountName for the default one)", ErrConnString, service, setting)
}
