// Package requestsize measures entities and entity-group transactions that a program builds
// itself with the Azure SDK (aztables.TransactionAction values), as the library's own planner
// measures its writes, so such code can stay within the service's limits before it sends
// anything. It is the Go counterpart of the .NET library's TableRequestSize.
//
// An entity is given as the JSON an aztables call takes (the Entity of a TransactionAction,
// or the bytes passed to AddEntity), with @odata.type annotations for the types JSON cannot
// say (Edm.Int64, Edm.Double, Edm.DateTime, Edm.Guid, Edm.Binary).
package requestsize

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// The limits the library plans within; see package service for each.
const (
	MaxTransactionActions      = service.MaxTransactionActions
	MaxTransactionPayloadBytes = service.MaxBodySize
	MaxTransactionWireBytes    = service.MaxTransactionWireBytes
	MaxTransactionEntityBytes  = service.MaxTransactionEntityBytes
	MaxEntityBytes             = service.MaxEntityBytes
	MaxEntityProperties        = service.MaxEntityProperties
)

// EntityBytes returns the size the service counts for the entity (compare with
// MaxEntityBytes): 4 bytes, the keys as UTF-16, and per property 8 bytes, its name as UTF-16
// and its value (strings as UTF-16, binary decoded, with 4 bytes of length). It refuses JSON
// that is not an entity object.
func EntityBytes(entity []byte) (int, error) {
	row, err := parse(entity)
	if err != nil {
		return 0, err
	}
	return service.EntitySize(row.PartitionKey, row.RowKey, row.Properties), nil
}

// EntityWireBytes returns the length of the JSON body the Azure SDK for Go sends for the
// entity: the SDK decodes the entity into a map and encodes it again with encoding/json
// (which escapes <, > and & and drops a whole double's ".0"), so this is exact, not an
// estimate. Text counts as its UTF-8 bytes; the Go SDK does not escape other characters.
func EntityWireBytes(entity []byte) (int, error) {
	var m map[string]any
	// As the SDK does: numbers become float64, so a whole double loses its ".0".
	if err := json.Unmarshal(entity, &m); err != nil {
		return 0, fmt.Errorf("requestsize: the entity is not a JSON object: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// FitsOneTransaction reports whether actions fit one entity-group transaction as the library
// plans them: one partition, each row once, at most MaxTransactionActions actions, at most
// MaxTransactionEntityBytes stored and MaxTransactionWireBytes on the wire. When they do
// not, reason says why.
func FitsOneTransaction(actions []aztables.TransactionAction) (fits bool, reason string, err error) {
	acts := make([]service.Action, len(actions))
	for i, a := range actions {
		row, err := parse(a.Entity)
		if err != nil {
			return false, "", fmt.Errorf("requestsize: action %d: %w", i, err)
		}
		op := service.OpUpsertReplace
		switch a.ActionType {
		case aztables.TransactionTypeAdd:
			op = service.OpInsert
		case aztables.TransactionTypeDelete:
			op = service.OpDelete
		}
		acts[i] = service.Action{Op: op, Row: row}
	}
	reason = largevalue.TransactionReason(acts)
	return reason == "", reason, nil
}

// parse reads an entity's JSON into a row with typed cells.
func parse(entity []byte) (service.Row, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(entity, &m); err != nil {
		return service.Row{}, fmt.Errorf("the entity is not a JSON object: %w", err)
	}
	var row service.Row
	for name, raw := range m {
		if strings.HasSuffix(name, "@odata.type") || strings.HasPrefix(name, "odata.") || name == "Timestamp" {
			continue
		}
		var s string
		isString := json.Unmarshal(raw, &s) == nil
		switch name {
		case "PartitionKey":
			row.PartitionKey = s
			continue
		case "RowKey":
			row.RowKey = s
			continue
		}
		var typ string
		if t, ok := m[name+"@odata.type"]; ok {
			_ = json.Unmarshal(t, &typ)
		}
		var v service.Value
		switch {
		case typ == "Edm.Binary":
			b, _ := base64.StdEncoding.DecodeString(s)
			v = service.BinaryNoCopy(b)
		case typ == "Edm.Int64", typ == "Edm.DateTime", typ == "Edm.Double":
			v = service.Int64(0) // eight bytes, as every one of them
		case typ == "Edm.Guid":
			v = service.Guid([16]byte{})
		case isString:
			v = service.String(s)
		case string(raw) == "true" || string(raw) == "false":
			v = service.Bool(true)
		case string(raw) == "null":
			continue
		case bytes.ContainsAny(raw, ".eE"):
			v = service.Int64(0)
		default:
			v = service.Int32(0)
		}
		row.Properties = append(row.Properties, service.Property{Name: name, Value: v})
	}
	return row, nil
}
