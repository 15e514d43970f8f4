package memservice

import (
	"time"

	"github.com/unified-data/gotables/inmemory/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// The service's documented limits.
const (
	maxKeyUnits    = 1024 // UTF-16 code units per PartitionKey or RowKey
	maxProperties  = service.MaxEntityProperties
	maxNameLen     = 255     // characters per property name
	maxEntitySize  = 1 << 20 // bytes per row, by the documented formula
	maxBodySize    = service.MaxBodySize
	maxActions     = service.MaxTransactionActions
	maxPageRows    = 1000 // rows per query page
	maxListResults = 5000 // blobs per listing page
)

// minDateTime and maxDateTime bound the Edm.DateTime values the service can store (the range
// of a .NET DateTime from the Windows epoch on).
var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// checkKey applies the key rules to one key. inBody says where the service reads the key
// from: an insert sends it in the body, where a bad character is 400 OutOfRangeInput; every
// other operation puts it in the URL, where it is 400 InvalidInput.
func checkKey(param, key string, inBody bool) error {
	for _, r := range key {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r <= 0x1f || 0x7f <= r && r <= 0x9f {
			if inBody {
				return errOutOfRange(param, key)
			}
			return errInvalidInput("Bad Request - Error in query syntax.")
		}
	}
	if service.UTF16Len(key) > maxKeyUnits {
		return errKeyTooLarge(param)
	}
	return nil
}

// checkKeys applies checkKey to both keys of a row.
func checkKeys(pk, rk string, inBody bool) error {
	if err := checkKey("PartitionKey", pk, inBody); err != nil {
		return err
	}
	return checkKey("RowKey", rk, inBody)
}

// validName reports whether name is a C# identifier, the names the service accepts: a
// letter of any script or '_' first, then letters, decimal digits, '_', combining marks
// and connector punctuation. So "Größe" passes; "a-b", "a b" and "1a" do not.
func validName(name string) bool { return odata.IsName(name) }

// checkProperties validates the custom properties of a write and returns them without the
// invalid (null) values, which the service drops: props itself when it holds none, a copy
// otherwise. Count is checked first, then each property in order: name length, name syntax,
// reserved names, duplicates, value.
func checkProperties(props []service.Property) ([]service.Property, error) {
	out := props
	for i := range props {
		if !props[i].Value.IsValid() {
			out = make([]service.Property, 0, len(props))
			for _, p := range props {
				if p.Value.IsValid() {
					out = append(out, p)
				}
			}
			break
		}
	}
	if len(out) > maxProperties {
		return nil, errTooManyProperties()
	}
	// Most rows have a dozen properties: comparing each name with the ones before it costs
	// less than a map, which only many properties repay.
	var seen map[string]struct{}
	if len(out) > manyProperties {
		seen = make(map[string]struct{}, len(out))
	}
	for i, p := range out {
		switch {
		case len(p.Name) > maxNameLen && service.UTF16Len(p.Name) > maxNameLen:
			return nil, errNameTooLong()
		case !validName(p.Name), p.Name == "PartitionKey", p.Name == "RowKey", p.Name == "Timestamp":
			return nil, errNameInvalid(p.Name)
		}
		dup := false
		if seen != nil {
			_, dup = seen[p.Name]
			seen[p.Name] = struct{}{}
		} else {
			dup = indexOf(out[:i], p.Name) >= 0
		}
		if dup {
			return nil, errDuplicateProperty(p.Name)
		}
		if err := checkValue(p.Name, p.Value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// manyProperties is the number of properties above which checkProperties finds duplicates
// with a map.
const manyProperties = 32

// checkValue applies the per-value limits.
func checkValue(name string, v service.Value) error {
	switch v.Kind() {
	case service.KindString, service.KindBinary:
		if _, over := service.CellTooLarge(v); over {
			return errValueTooLarge()
		}
	case service.KindDateTime:
		if t := v.Time(); t.Before(minDateTime) || t.After(maxDateTime) {
			return errOutOfRange(name, service.FormatDateTime(t))
		}
	}
	return nil
}

// checkRow applies the whole-row limits to the row a write would store, its size as the
// service product counts it (service.EntitySizeOn: Cosmos DB counts binary values larger).
func checkRow(product service.Product, pk, rk string, props []service.Property) error {
	if len(props) > maxProperties {
		return errTooManyProperties()
	}
	if entityBound(pk, rk, props) > maxEntitySize && service.EntitySizeOn(product, pk, rk, props) > maxEntitySize {
		return errEntityTooLarge()
	}
	return nil
}

// entityBound is at least service.EntitySizeOn, whatever the product, and costs a length
// per string: a string has no more UTF-16 code units than bytes, and a binary value counts
// at most its base64 length (with the 16 bytes a property is given here). Rows far below
// the limit skip the exact count.
func entityBound(pk, rk string, props []service.Property) int {
	n := 4 + 2*len(pk) + 2*len(rk)
	for i := range props {
		p := &props[i]
		n += 8 + 2*len(p.Name) + 16
		switch p.Value.Kind() {
		case service.KindString:
			n += 2 * len(p.Value.Str())
		case service.KindBinary:
			n += 2 * len(p.Value.Bytes())
		}
	}
	return n
}

// bodyBound is at least service.BodySize(a): encoding/json writes no string byte as more
// than six (\u00XX), a binary is base64, and no other value takes 40 bytes. Bodies far below
// the 4 MiB limit skip the exact estimate.
func bodyBound(a *service.Action) int {
	n := 64 + 6*len(a.Row.PartitionKey) + 6*len(a.Row.RowKey)
	for i := range a.Row.Properties {
		p := &a.Row.Properties[i]
		// The name twice (the annotation repeats it), the punctuation and the annotation.
		n += 2*(6*len(p.Name)+2) + 40
		switch p.Value.Kind() {
		case service.KindString:
			n += 6*len(p.Value.Str()) + 2
		case service.KindBinary:
			n += 4*((len(p.Value.Bytes())+2)/3) + 2
		default:
			n += 40
		}
	}
	return n
}
