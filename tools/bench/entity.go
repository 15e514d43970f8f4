package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// Order is the entity every workload stores: a typical row of a dozen columns, strings,
// numbers, times and a flag.
type Order struct {
	abstractions.Entity
	Customer string
	Status   string
	Notes    string
	Quantity int32
	Sequence int64
	Amount   float64
	Paid     bool
}

// newOrder returns the order number i of a partition, with every column set.
func newOrder(partition, rowKey string, i int) *Order {
	return &Order{
		Entity:   abstractions.Entity{ID: partition + "|" + rowKey},
		Customer: "customer-" + strconv.Itoa(i%97),
		Status:   "shipped",
		Notes:    "leave at the door; ring twice",
		Quantity: int32(i%10 + 1),
		Sequence: int64(i) * 1_000_003,
		Amount:   float64(i) + 0.25,
		Paid:     i%2 == 0,
	}
}

// rawOrder is the same entity as hand-written SDK code holds it: keys, version and typed
// columns, filled from the JSON the SDK returns.
type rawOrder struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Timestamp    time.Time
	ID           string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Customer     string
	Status       string
	Notes        string
	Quantity     int32
	Sequence     int64
	Amount       float64
	Paid         bool
}

// newRawOrder is newOrder for the raw side.
func newRawOrder(partition, rowKey string, i int) *rawOrder {
	o := newOrder(partition, rowKey, i)
	return &rawOrder{
		PartitionKey: partition, RowKey: rowKey, ID: o.ID,
		Customer: o.Customer, Status: o.Status, Notes: o.Notes,
		Quantity: o.Quantity, Sequence: o.Sequence, Amount: o.Amount, Paid: o.Paid,
	}
}

// marshal encodes the entity the way the SDK's samples do: a map with an @odata.type
// annotation on each value JSON cannot type by itself (64-bit integers travel as strings,
// times as text, doubles must not be taken for integers), then encoding/json. It stamps
// the times first, as the library does on every write.
func (o *rawOrder) marshal(now time.Time) ([]byte, error) {
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now
	}
	o.UpdatedAt = now
	m := map[string]any{
		"PartitionKey":         o.PartitionKey,
		"RowKey":               o.RowKey,
		"Id":                   o.ID,
		"CreatedAt":            o.CreatedAt.UTC().Format(time.RFC3339Nano),
		"CreatedAt@odata.type": "Edm.DateTime",
		"UpdatedAt":            o.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"UpdatedAt@odata.type": "Edm.DateTime",
		"Customer":             o.Customer,
		"Status":               o.Status,
		"Notes":                o.Notes,
		"Quantity":             o.Quantity,
		"Sequence":             strconv.FormatInt(o.Sequence, 10),
		"Sequence@odata.type":  "Edm.Int64",
		"Amount":               o.Amount,
		"Amount@odata.type":    "Edm.Double",
		"Paid":                 o.Paid,
	}
	return json.Marshal(m)
}

// unmarshalRawOrder decodes an entity the SDK returned (minimal metadata) into a rawOrder,
// checking the types as careful hand-written code must.
func unmarshalRawOrder(body []byte) (*rawOrder, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	o := &rawOrder{}
	var err error
	str := func(name string) string {
		s, ok := m[name].(string)
		if !ok && err == nil {
			err = fmt.Errorf("column %s: not a string", name)
		}
		return s
	}
	num := func(name string) float64 {
		f, ok := m[name].(float64)
		if !ok && err == nil {
			err = fmt.Errorf("column %s: not a number", name)
		}
		return f
	}
	when := func(name string) time.Time {
		t, perr := time.Parse(time.RFC3339Nano, str(name))
		if perr != nil && err == nil {
			err = fmt.Errorf("column %s: %w", name, perr)
		}
		return t
	}
	o.PartitionKey, o.RowKey = str("PartitionKey"), str("RowKey")
	if etag, ok := m["odata.etag"].(string); ok {
		o.ETag = etag
	}
	o.Timestamp = when("Timestamp")
	o.ID = str("Id")
	o.CreatedAt, o.UpdatedAt = when("CreatedAt"), when("UpdatedAt")
	o.Customer, o.Status, o.Notes = str("Customer"), str("Status"), str("Notes")
	o.Quantity = int32(num("Quantity"))
	seq, perr := strconv.ParseInt(str("Sequence"), 10, 64)
	if perr != nil && err == nil {
		err = fmt.Errorf("column Sequence: %w", perr)
	}
	o.Sequence = seq
	o.Amount = num("Amount")
	paid, ok := m["Paid"].(bool)
	if !ok && err == nil {
		err = fmt.Errorf("column Paid: not a boolean")
	}
	o.Paid = paid
	if err != nil {
		return nil, err
	}
	return o, nil
}

// seedRows are the rows every backend's read, query and count workloads find.
func seedRows(z Sizes) []*Order {
	rows := make([]*Order, 0, z.ReadRows+z.ListRows+z.CountRows)
	for i := range z.ReadRows {
		rows = append(rows, newOrder("read", rowKey(i), i))
	}
	for i := range z.ListRows {
		rows = append(rows, newOrder("list", rowKey(i), i))
	}
	for i := range z.CountRows {
		rows = append(rows, newOrder("count", rowKey(i), i))
	}
	return rows
}
