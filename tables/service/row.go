package service

import "time"

// A Property is one named cell of a row.
type Property struct {
	Name  string
	Value Value
}

// A Row is one table entity as the service stores it: its keys, its custom properties, and,
// on rows read from the service, the ETag and Timestamp the service assigned. PartitionKey,
// RowKey, Timestamp and ETag are never in Properties.
type Row struct {
	PartitionKey string
	RowKey       string
	// Properties holds the custom properties in no particular order; names are unique.
	Properties []Property
	// ETag is the entity's version as the service reports it, such as
	// W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'". Ignored on writes.
	ETag string
	// Timestamp is the time of the entity's last write, set by the service. Ignored on writes.
	Timestamp time.Time
}

// Get returns the value of the named custom property.
func (r *Row) Get(name string) (Value, bool) {
	for i := range r.Properties {
		if r.Properties[i].Name == name {
			return r.Properties[i].Value, true
		}
	}
	return Value{}, false
}

// Clone returns a copy of r whose Properties slice is not shared with r. Values are
// immutable, so they are shared.
func (r Row) Clone() Row {
	r.Properties = append([]Property(nil), r.Properties...)
	return r
}

// Written is what the service reports for a successful row write, alone or in a transaction:
// the new ETag and the Timestamp it stored. A delete reports the zero Written.
type Written struct {
	ETag      string
	Timestamp time.Time
}
