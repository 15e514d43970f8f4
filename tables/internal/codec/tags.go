package codec

import (
	"slices"
	"strings"
)

// tagKey is the struct tag key the codec reads.
const tagKey = "table"

// tagInfo is a parsed `table` tag.
type tagInfo struct {
	ignore    bool
	aliases   []string
	split     string
	offload   string
	protected []string
	// indexes are the index= option's items: an index name, with ":desc" for one that lists
	// its values from the largest.
	indexes []string
	// uniques are the unique= option's index names.
	uniques []string
	// typeAliases are the "Target:Old" pairs of a blank marker field's alias option.
	typeAliases []typeAlias
	// expires marks the field that holds the entity's expiry time; expiresTTL is the
	// option's value, a default time to live ("" when none), which the engine checks.
	expires    bool
	expiresTTL string
}

type typeAlias struct{ target, old string }

func (ti *tagInfo) hasOptions() bool {
	return len(ti.aliases) > 0 || ti.split != "" || ti.offload != "" || len(ti.protected) > 0 ||
		len(ti.typeAliases) > 0 || len(ti.indexes) > 0 || len(ti.uniques) > 0 || ti.expires
}

// parseTag parses a field's `table` tag. marker says the field is a blank `_` field, whose
// alias option takes "Target:Old" items. The returned string is a reason for a PlanError.
func parseTag(tag string, marker bool) (tagInfo, string) {
	var ti tagInfo
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" && opts == "" && !strings.Contains(tag, ",") {
		ti.ignore = true
		return ti, ""
	}
	if name != "" {
		return ti, "the `table` tag names no column (" + quote(name) + "): a column is named after its field; " +
			"rename the field and declare the old name with `table:\",alias=Old\"`, or use `table:\"-\"` to skip it"
	}
	if opts == "" {
		return ti, ""
	}
	seen := map[string]bool{}
	for _, opt := range strings.Split(opts, ",") {
		key, val, hasVal := strings.Cut(opt, "=")
		if seen[key] {
			return ti, "the `table` tag repeats the option " + quote(key) + "; give it once"
		}
		seen[key] = true
		switch key {
		case "alias", "split", "offload", "protected", "index", "unique":
		case "expires":
			// The one option that may stand alone: the field is the expiry time; a value is
			// a default time to live (package tables/internal/engine checks it).
			if marker {
				return ti, "expires applies to a field, not to a type; tag the time.Time field that holds the expiry time"
			}
			ti.expires, ti.expiresTTL = true, val
			if hasVal && val == "" {
				return ti, "the `table` tag option \"expires=\" needs a time to live, such as expires=24h, or no '=' at all"
			}
			continue
		default:
			return ti, "the `table` tag has an unknown option " + quote(opt) +
				"; the options are alias=, split=, offload=, protected=, index=, unique= and expires"
		}
		if !hasVal || val == "" {
			return ti, "the `table` tag option " + quote(key) + " needs a value, such as " + key + "=..."
		}
		switch key {
		case "alias":
			if marker {
				target := ""
				for _, item := range strings.Split(val, "|") {
					t, old, ok := strings.Cut(item, ":")
					if ok {
						target = t
					} else {
						old = item
					}
					if target == "" {
						return ti, "a type-level alias names its target column first, as alias=Target:Old"
					}
					if reason := checkAlias(old); reason != "" {
						return ti, reason
					}
					ti.typeAliases = append(ti.typeAliases, typeAlias{target, old})
				}
			} else {
				for _, old := range strings.Split(val, "|") {
					if strings.Contains(old, ":") {
						return ti, "alias " + quote(old) + " holds ':'; the Target:Old form belongs on a blank marker field (_ struct{})"
					}
					if reason := checkAlias(old); reason != "" {
						return ti, reason
					}
					ti.aliases = append(ti.aliases, old)
				}
			}
		case "split":
			switch val {
			case SplitText, SplitGzip, SplitBinary:
			default:
				return ti, "split=" + val + " is not an encoding; use split=text, split=gzip or (for []byte) split=binary"
			}
			ti.split = val
		case "offload":
			switch val {
			case OffloadAbove, OffloadNever:
			default:
				return ti, "offload=" + val + " is not an offload rule; use offload=above (the default) or offload=never"
			}
			ti.offload = val
		case "protected":
			if marker {
				return ti, "protected= applies to a field, not to a type; tag the fields to protect"
			}
			for _, role := range strings.Split(val, "|") {
				if role = strings.TrimSpace(role); role == "" {
					return ti, "protected= lists roles separated by '|', with no empty role"
				}
				ti.protected = append(ti.protected, role)
			}
		case "index", "unique":
			// The names and their order are checked where indexes are built (package
			// tables/internal/indexrow), which owns their rules.
			if marker {
				return ti, key + "= applies to a field, not to a type; tag the field to index"
			}
			items := strings.Split(val, "|")
			if slices.ContainsFunc(items, func(item string) bool { return strings.TrimSpace(item) == "" }) {
				return ti, key + "= lists index names separated by '|', with no empty name"
			}
			if key == "index" {
				ti.indexes = append(ti.indexes, items...)
			} else {
				ti.uniques = append(ti.uniques, items...)
			}
		}
	}
	return ti, ""
}

// checkAlias returns why an old column name cannot be an alias, or "".
func checkAlias(old string) string {
	switch {
	case old == "":
		return "an alias is empty; list old column names separated by '|'"
	case strings.HasPrefix(old, "_"):
		return "alias " + quote(old) + " starts with '_', which is reserved for the storage layer's own columns"
	case strings.Contains(old, "__"):
		return "alias " + quote(old) + " holds \"__\"; name the old column itself, its __Json and __GZip forms are read too"
	}
	return ""
}

func quote(s string) string { return "\"" + s + "\"" }
