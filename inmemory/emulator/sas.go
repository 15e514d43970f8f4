package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// A sas is the shared access signature a request carries, once its signature, times, IP
// range and protocol have been checked: what it grants.
type sas struct {
	account bool   // an account SAS; otherwise a table SAS
	perms   string // sp
	types   string // srt, for an account SAS
	table   string // tn, for a table SAS
	// The key range of a table SAS: an entity is in it when (spk, srk) <= (PK, RK) <=
	// (epk, erk), a bound that is absent leaving that side open.
	spk, srk, epk, erk string
}

// sasTimeLayouts are the forms of a signed start or expiry time the service reads (ISO 8601
// in UTC, to the day, minute, second or fraction of a second).
var sasTimeLayouts = []string{"2006-01-02T15:04:05Z", time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"}

func parseSASTime(s string) (time.Time, bool) {
	for _, l := range sasTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// authenticateSAS verifies the shared access signature in the request's query, for the
// account its URL names, and records what it grants in q.sas. An account SAS (ss and srt)
// and a table SAS (tn) are told apart by their fields. The strings to sign are the
// service's for versions 2015-04-05 and later:
//
//	account: account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n [ses \n, from 2020-12-06]
//	table:   sp \n st \n se \n /table/account/tn \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
//
// A table SAS may name one of its table's stored access policies (si), which supplies the
// start, expiry and permissions it sets. Everything about the token itself (a missing
// field, a signature that does not verify, a time outside its window, a policy the table
// does not have, a field both the SAS and its policy set) fails with 403
// AuthenticationFailed, as on the service; an IP address outside sip, or
// http where spr asks for https, with the service's AuthorizationSourceIPMismatch and
// AuthorizationProtocolMismatch.
func (q *request) authenticateSAS() error {
	v := q.r.URL.Query()
	sig, sv, ok := readSAS(v)
	if !ok {
		return errAuthentication()
	}
	s := &sas{perms: v.Get("sp")}
	var toSign string
	switch {
	case v.Has("ss") || v.Has("srt"):
		s.account, s.types = true, v.Get("srt")
		toSign = accountSASToSign(q.acct.name, v, sv)
	case v.Has("tn"):
		s.table = v.Get("tn")
		s.spk, s.srk, s.epk, s.erk = v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")
		toSign = strings.Join([]string{s.perms, v.Get("st"), v.Get("se"), "/table/" + q.acct.name + "/" + strings.ToLower(s.table),
			v.Get("si"), v.Get("sip"), v.Get("spr"), sv, s.spk, s.srk, s.epk, s.erk}, "\n")
	default:
		return errAuthentication()
	}
	if !signedBy(q.acct.key, toSign, sig) {
		return errAuthentication()
	}
	// A table SAS naming a stored access policy (si) takes from it the fields the policy
	// sets, which the SAS may not repeat; the policy is read at each request, so changing
	// or removing it changes or revokes the SAS. An account SAS names none.
	var pol storedPolicy
	if si := v.Get("si"); si != "" {
		p, ok := q.acct.acls.policy(s.table, si)
		if s.account || !ok ||
			(p.perms != "" && s.perms != "") || (!p.start.IsZero() && v.Has("st")) || (!p.expiry.IsZero() && v.Has("se")) {
			return errAuthentication()
		}
		pol = p
		if s.perms == "" {
			s.perms = p.perms
		}
	}
	if s.perms == "" || (v.Get("se") == "" && pol.expiry.IsZero()) || (s.account && (v.Get("ss") == "" || s.types == "")) {
		return errAuthentication()
	}
	if !inSASWindow(q.h.now(), v, pol.start, pol.expiry) {
		return errAuthentication()
	}
	if err := checkSASScope(q.r, v, s.account, "t"); err != nil {
		return err
	}
	q.sas = s
	return nil
}

// readSAS reads what every shared access signature carries: its signature, which must be
// base64, and its version, which must be 2015-04-05 or later.
func readSAS(v url.Values) (sig []byte, sv string, ok bool) {
	sig, err := base64.StdEncoding.DecodeString(v.Get("sig"))
	sv = v.Get("sv")
	return sig, sv, err == nil && len(sig) > 0 && sv >= "2015-04-05"
}

// accountSASToSign is the string an account SAS of version sv signs, for either service.
func accountSASToSign(account string, v url.Values, sv string) string {
	fields := []string{account, v.Get("sp"), v.Get("ss"), v.Get("srt"), v.Get("st"), v.Get("se"), v.Get("sip"), v.Get("spr"), sv}
	if sv >= "2020-12-06" {
		fields = append(fields, v.Get("ses"))
	}
	return strings.Join(fields, "\n") + "\n"
}

// signedBy reports whether sig is the HMAC-SHA256 of toSign with the account's key.
func signedBy(key []byte, toSign string, sig []byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(toSign))
	return hmac.Equal(mac.Sum(nil), sig)
}

// inSASWindow reports whether now is within the SAS's start (st) and expiry (se), each
// taken from the SAS when it has one and else from start and expiry (a stored policy's, or
// zero). Without an expiry, or with a time it cannot read, it is not.
func inSASWindow(now time.Time, v url.Values, start, expiry time.Time) bool {
	if se := v.Get("se"); se != "" {
		var ok bool
		if expiry, ok = parseSASTime(se); !ok {
			return false
		}
	}
	if st := v.Get("st"); st != "" {
		var ok bool
		if start, ok = parseSASTime(st); !ok {
			return false
		}
	}
	return now.Before(expiry) && (start.IsZero() || !now.Before(start))
}

// checkSASScope checks what a SAS of either service may restrict besides its times and
// permissions: the client's address (sip), the protocol (spr) and, for an account SAS, the
// services it grants (ss must name service: "t" tables, "b" blobs).
func checkSASScope(r *http.Request, v url.Values, account bool, service string) error {
	if sip := v.Get("sip"); sip != "" {
		ip, ok := sourceIPIn(r.RemoteAddr, sip)
		if !ok {
			return statusError(http.StatusForbidden, "AuthorizationSourceIPMismatch",
				"This request is not authorized to perform this operation using this source IP "+ip+".")
		}
	}
	switch v.Get("spr") {
	case "", "https,http", "http,https":
	case "https":
		if r.TLS == nil {
			return statusError(http.StatusForbidden, "AuthorizationProtocolMismatch",
				"This request is not authorized to perform this operation using this protocol.")
		}
	default:
		return errAuthentication()
	}
	if account && !strings.Contains(v.Get("ss"), service) {
		return statusError(http.StatusForbidden, "AuthorizationServiceMismatch",
			"This request is not authorized to perform this operation using this service.")
	}
	return nil
}

// sourceIPIn reports whether the address remoteAddr (host:port) is in sip, one address or
// two joined by a hyphen, and returns the address.
func sourceIPIn(remoteAddr, sip string) (string, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host, false
	}
	ip = ip.Unmap()
	lo, hi, ok := strings.Cut(sip, "-")
	if !ok {
		hi = lo
	}
	from, err1 := netip.ParseAddr(lo)
	to, err2 := netip.ParseAddr(hi)
	if err1 != nil || err2 != nil {
		return ip.String(), false
	}
	return ip.String(), from.Compare(ip) <= 0 && ip.Compare(to) <= 0
}

func errPermission() error {
	return statusError(http.StatusForbidden, "AuthorizationPermissionMismatch",
		"This request is not authorized to perform this operation using this permission.")
}

func errResourceType() error {
	return statusError(http.StatusForbidden, "AuthorizationResourceTypeMismatch",
		"This request is not authorized to perform this operation using this resource type.")
}

// errAuthorization is the service's answer to the other things a SAS does not allow: a
// table other than its own, a key outside its range, an operation on tables with a table
// SAS.
func errAuthorization() error {
	return statusError(http.StatusForbidden, "AuthorizationFailure", "This request is not authorized to perform this operation.")
}

// authorize checks that the request's SAS, if it has one, allows method on res. The
// permissions are the service's (Create Account SAS and Create Service SAS):
//
//	operation                   account SAS (srt, sp)   table SAS (sp)
//	Query Tables, read a table  c, l                    refused
//	Create Table                c, a or c or w          refused
//	Delete Table                c, d                    refused
//	Query Entities, read one    o, r                    r
//	Insert Entity               o, a                    a
//	Update, Merge Entity        o, u                    u
//	Insert Or Replace / Merge   o, a and u              a and u
//	Delete Entity               o, d                    d
//
// A table SAS also requires the URL's table to be its table and, for one entity, the keys
// to be in its range. A $batch is checked action by action (authorizeAction).
func (q *request) authorize(method string, res resource) error {
	s := q.sas
	if s == nil {
		return nil
	}
	var types, perms string
	switch {
	case res.kind == resTables && method == http.MethodGet, res.kind == resTable && method == http.MethodGet:
		types, perms = "c", "l"
	case res.kind == resTables && method == http.MethodPost:
		types, perms = "c", "acw"
	case res.kind == resTable && method == http.MethodDelete:
		types, perms = "c", "d"
	case res.kind == resEntities || res.kind == resEntity || res.kind == resBatch:
		if !s.account && res.kind != resBatch && !strings.EqualFold(res.table, s.table) {
			return errAuthorization()
		}
		if s.account && !strings.Contains(s.types, "o") {
			return errResourceType()
		}
		switch {
		case res.kind == resBatch:
			return nil
		case method == http.MethodGet:
			perms = "r"
		case method == http.MethodPost:
			perms = "a"
		default:
			op, err := writeOp(method, q.r.Header.Get("If-Match"))
			if err != nil {
				return nil // the operation's own error comes first
			}
			return s.allows(res.table, service.Action{Op: op, Row: service.Row{PartitionKey: res.pk, RowKey: res.rk}})
		}
		if !strings.ContainsAny(s.perms, perms) {
			return errPermission()
		}
		if res.kind == resEntity && !s.inRange(res.pk, res.rk) {
			return errAuthorization()
		}
		return nil
	case res.kind == resACL:
		return errAuthorization() // only the account's key reads or sets an ACL
	default:
		return nil // what the emulator does not implement is refused as such
	}
	if !s.account {
		return errAuthorization()
	}
	if !strings.Contains(s.types, types) {
		return errResourceType()
	}
	if !strings.ContainsAny(s.perms, perms) {
		return errPermission()
	}
	return nil
}

// allows checks that the SAS, if there is one, allows action a on table: its permission
// and, for a table SAS, its table and key range. It serves the entity writes (an insert's
// keys are in its body) and each action of a batch.
func (s *sas) allows(table string, a service.Action) error {
	if s == nil {
		return nil
	}
	if !s.account && !strings.EqualFold(table, s.table) {
		return errAuthorization()
	}
	var need string
	switch a.Op {
	case service.OpInsert:
		need = "a"
	case service.OpReplace, service.OpMerge:
		need = "u"
	case service.OpUpsertReplace, service.OpUpsertMerge:
		need = "au"
	case service.OpDelete:
		need = "d"
	}
	for _, p := range need {
		if !strings.ContainsRune(s.perms, p) {
			return errPermission()
		}
	}
	if !s.inRange(a.Row.PartitionKey, a.Row.RowKey) {
		return errAuthorization()
	}
	return nil
}

// inRange reports whether the entity (pk, rk) is in the SAS's key range.
func (s *sas) inRange(pk, rk string) bool {
	if s.account {
		return true
	}
	if s.spk != "" && (pk < s.spk || (pk == s.spk && rk < s.srk)) {
		return false
	}
	if s.epk != "" && (pk > s.epk || (pk == s.epk && s.erk != "" && rk > s.erk)) {
		return false
	}
	return true
}

// rangeFilter returns filter restricted to the SAS's key range, in the OData the memory
// service reads: a query with a table SAS returns only the entities in its range.
func (s *sas) rangeFilter(filter string) string {
	if s == nil || s.account || (s.spk == "" && s.epk == "") {
		return filter
	}
	var conds []string
	if s.spk != "" {
		conds = append(conds, "(PartitionKey gt "+odataString(s.spk)+" or (PartitionKey eq "+odataString(s.spk)+" and RowKey ge "+odataString(s.srk)+"))")
	}
	if s.epk != "" {
		end := "PartitionKey le " + odataString(s.epk)
		if s.erk != "" {
			end = "PartitionKey lt " + odataString(s.epk) + " or (PartitionKey eq " + odataString(s.epk) + " and RowKey le " + odataString(s.erk) + ")"
		}
		conds = append(conds, "("+end+")")
	}
	if strings.TrimSpace(filter) != "" {
		conds = append([]string{"(" + filter + ")"}, conds...)
	}
	return strings.Join(conds, " and ")
}

// odataString is s as an OData string literal.
func odataString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// isSAS reports whether the request is authorized by a shared access signature: it has a
// sig parameter and no Authorization header.
func isSAS(r *http.Request) bool {
	return r.Header.Get("Authorization") == "" && r.URL.Query().Has("sig")
}
