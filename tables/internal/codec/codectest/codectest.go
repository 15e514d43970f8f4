// Package codectest holds the reference entity of the codec's tests and benchmarks and of the
// Azure adapter's (Customer: 20 fields with the entity base, one nested struct and one slice),
// and the conversion aztables users write by hand for it, to and from a map[string]any, which
// the benchmarks measure the codec against. Only tests import it.
package codectest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Tier is an enum stored as its text.
type Tier int

// The tiers.
const (
	Bronze Tier = iota
	Silver
	Gold
)

var tierNames = []string{"bronze", "silver", "gold"}

// MarshalText returns the tier's name; a tier without one is refused.
func (t Tier) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(tierNames) {
		return nil, fmt.Errorf("tier %d has no name", int(t))
	}
	return []byte(tierNames[t]), nil
}

// UnmarshalText sets the tier named by b; an unknown name is refused.
func (t *Tier) UnmarshalText(b []byte) error {
	for i, n := range tierNames {
		if n == string(b) {
			*t = Tier(i)
			return nil
		}
	}
	return fmt.Errorf("unknown tier %q", b)
}

// Geo is a struct nested two deep in Customer (Home_Geo_Lat).
type Geo struct {
	Lat, Lon float64
}

// Address is Customer's nested struct (Home_Street, Home_City, Home_Geo_*).
type Address struct {
	Street string
	City   string
	Geo    Geo
}

// Customer is the reference entity: the three stored fields of the entity base and 17 of its
// own, among them one nested struct (Home) and one slice (Tags).
type Customer struct {
	abstractions.Entity
	Name     string
	Email    string
	Age      int32
	Visits   int64
	Level    uint8
	Flags    uint64
	Score    float32
	Balance  float64
	Active   bool
	Birthday time.Time
	Timeout  time.Duration
	Key      abstractions.GUID
	Avatar   []byte
	Tier     Tier
	Nick     *string
	Home     Address
	Tags     []string
}

// Reference returns the reference value, with every field set; its keys are "eu" and
// "alice". The codec's golden file pins the cells it is stored as.
func Reference() *Customer {
	key, err := abstractions.ParseGUID("00112233-4455-6677-8899-aabbccddeeff")
	if err != nil {
		panic(err)
	}
	nick := "ali"
	return &Customer{
		Entity: abstractions.Entity{
			ID:        "eu|alice",
			CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 600000000, time.UTC),
			UpdatedAt: time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC),
		},
		Name:     "Alice",
		Email:    "alice@example.com",
		Age:      41,
		Visits:   1 << 40,
		Level:    7,
		Flags:    1<<63 | 5,
		Score:    2.5,
		Balance:  1234.5,
		Active:   true,
		Birthday: time.Date(1983, 7, 14, 0, 0, 0, 0, time.UTC),
		Timeout:  90 * time.Second,
		Key:      key,
		Avatar:   []byte{1, 2, 3},
		Tier:     Gold,
		Nick:     &nick,
		Home:     Address{Street: "1 Main St", City: "Dublin", Geo: Geo{Lat: 53.35, Lon: -6.26}},
		Tags:     []string{"vip", "beta"},
	}
}

// HandEncode is the write conversion aztables users write: a map with an @odata.type
// annotation for every value whose type the service would not infer from the JSON token.
func HandEncode(c *Customer, pk, rk string) (map[string]any, error) {
	tier, err := c.Tier.MarshalText()
	if err != nil {
		return nil, err
	}
	tags, err := json.Marshal(c.Tags)
	if err != nil {
		return nil, err
	}
	m := map[string]any{
		"PartitionKey":            pk,
		"RowKey":                  rk,
		"Id":                      c.ID,
		"Name":                    c.Name,
		"Email":                   c.Email,
		"Age":                     c.Age,
		"Visits":                  strconv.FormatInt(c.Visits, 10),
		"Visits@odata.type":       "Edm.Int64",
		"Level":                   int32(c.Level),
		"Flags":                   strconv.FormatInt(int64(c.Flags), 10),
		"Flags@odata.type":        "Edm.Int64",
		"Score":                   float64(c.Score),
		"Score@odata.type":        "Edm.Double",
		"Balance":                 c.Balance,
		"Balance@odata.type":      "Edm.Double",
		"Active":                  c.Active,
		"Timeout":                 strconv.FormatInt(int64(c.Timeout), 10),
		"Timeout@odata.type":      "Edm.Int64",
		"Key":                     c.Key.String(),
		"Key@odata.type":          "Edm.Guid",
		"Tier":                    string(tier),
		"Home_Street":             c.Home.Street,
		"Home_City":               c.Home.City,
		"Home_Geo_Lat":            c.Home.Geo.Lat,
		"Home_Geo_Lat@odata.type": "Edm.Double",
		"Home_Geo_Lon":            c.Home.Geo.Lon,
		"Home_Geo_Lon@odata.type": "Edm.Double",
		"Tags__Json":              string(tags),
	}
	for name, t := range map[string]time.Time{"CreatedAt": c.CreatedAt, "UpdatedAt": c.UpdatedAt, "Birthday": c.Birthday} {
		if !t.IsZero() {
			m[name] = service.FormatDateTime(t)
			m[name+"@odata.type"] = "Edm.DateTime"
		}
	}
	if c.Avatar != nil {
		m["Avatar"] = base64.StdEncoding.EncodeToString(c.Avatar)
		m["Avatar@odata.type"] = "Edm.Binary"
	}
	if c.Nick != nil {
		m["Nick"] = *c.Nick
	}
	return m, nil
}

// HandDecode is the read conversion aztables users write: each field converted from what
// json.Unmarshal made of its token in m.
func HandDecode(m map[string]any) (*Customer, error) {
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) float64 { f, _ := m[k].(float64); return f }
	i64 := func(k string) (int64, error) { return strconv.ParseInt(str(k), 10, 64) }
	tm := func(k string) (time.Time, error) {
		if _, ok := m[k]; !ok {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, str(k))
		return t.UTC(), err
	}
	c := &Customer{}
	var err error
	c.ID, c.ETag = str("Id"), str("odata.etag")
	if c.Timestamp, err = tm("Timestamp"); err != nil {
		return nil, err
	}
	if c.CreatedAt, err = tm("CreatedAt"); err != nil {
		return nil, err
	}
	if c.UpdatedAt, err = tm("UpdatedAt"); err != nil {
		return nil, err
	}
	if c.Birthday, err = tm("Birthday"); err != nil {
		return nil, err
	}
	c.Name, c.Email = str("Name"), str("Email")
	c.Age, c.Level = int32(num("Age")), uint8(num("Level"))
	if c.Visits, err = i64("Visits"); err != nil {
		return nil, err
	}
	flags, err := i64("Flags")
	if err != nil {
		return nil, err
	}
	c.Flags = uint64(flags)
	c.Score, c.Balance = float32(num("Score")), num("Balance")
	c.Active, _ = m["Active"].(bool)
	timeout, err := i64("Timeout")
	if err != nil {
		return nil, err
	}
	c.Timeout = time.Duration(timeout)
	if c.Key, err = abstractions.ParseGUID(str("Key")); err != nil {
		return nil, err
	}
	if _, ok := m["Avatar"]; ok {
		if c.Avatar, err = base64.StdEncoding.DecodeString(str("Avatar")); err != nil {
			return nil, err
		}
	}
	if err := c.Tier.UnmarshalText([]byte(str("Tier"))); err != nil {
		return nil, err
	}
	if _, ok := m["Nick"]; ok {
		nick := str("Nick")
		c.Nick = &nick
	}
	c.Home.Street, c.Home.City = str("Home_Street"), str("Home_City")
	c.Home.Geo.Lat, c.Home.Geo.Lon = num("Home_Geo_Lat"), num("Home_Geo_Lon")
	if s, ok := m["Tags__Json"].(string); ok {
		if err := json.Unmarshal([]byte(s), &c.Tags); err != nil {
			return nil, err
		}
	}
	return c, nil
}
