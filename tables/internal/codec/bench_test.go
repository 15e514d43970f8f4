package codec_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
)

// The benchmarks convert the reference entity (20 fields, one nested struct, one slice)
// with the codec and by hand, the way aztables users write it: a map[string]any with
// explicit @odata.type annotations, marshalled with encoding/json, and on a read a map from
// json.Unmarshal converted field by field. The "cells" benchmarks compare the
// struct ⇄ cells step alone (the map is the hand-written code's cells); the "json"
// benchmarks add the hand-written request and response JSON for reference.

const dateTimeLayout = "2006-01-02T15:04:05.0000000Z"

func handEncode(c *Customer, pk, rk string) (map[string]any, error) {
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
			m[name] = t.UTC().Format(dateTimeLayout)
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

var errHand = errors.New("unexpected value")

func handDecode(m map[string]any) (*Customer, error) {
	c := &Customer{}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) float64 { f, _ := m[k].(float64); return f }
	i64 := func(k string) (int64, error) { return strconv.ParseInt(str(k), 10, 64) }
	tm := func(k string) (time.Time, error) {
		if _, ok := m[k]; !ok {
			return time.Time{}, nil
		}
		return time.Parse(time.RFC3339Nano, str(k))
	}
	var err error
	c.ID = str("Id")
	c.ETag = str("odata.etag")
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
	d, err := i64("Timeout")
	if err != nil {
		return nil, err
	}
	c.Timeout = time.Duration(d)
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
		n := str("Nick")
		c.Nick = &n
	}
	c.Home.Street, c.Home.City = str("Home_Street"), str("Home_City")
	c.Home.Geo.Lat, c.Home.Geo.Lon = num("Home_Geo_Lat"), num("Home_Geo_Lon")
	if s, ok := m["Tags__Json"].(string); ok {
		if err := json.Unmarshal([]byte(s), &c.Tags); err != nil {
			return nil, err
		}
	} else if ok {
		return nil, errHand
	}
	return c, nil
}

func TestHandConversionMatches(t *testing.T) {
	c := referenceCustomer()
	m, err := handEncode(c, "eu", "alice")
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	got, err := handDecode(back)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, got, c)
}

func BenchmarkEncode(b *testing.B) {
	c := referenceCustomer()
	b.Run("cells/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.EncodeRow(c, "eu", "alice", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cells/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handEncode(c, "eu", "alice"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := handEncode(c, "eu", "alice")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	c := referenceCustomer()
	row, err := codec.EncodeRow(c, "eu", "alice", nil)
	if err != nil {
		b.Fatal(err)
	}
	row.ETag, row.Timestamp = `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`, refTime
	m, err := handEncode(c, "eu", "alice")
	if err != nil {
		b.Fatal(err)
	}
	m["odata.etag"], m["Timestamp"] = row.ETag, row.Timestamp.Format(dateTimeLayout)
	body, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	var parsed map[string]any
	if err := json.Unmarshal(body, &parsed); err != nil {
		b.Fatal(err)
	}
	b.Run("cells/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.Decode[Customer](&row, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cells/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handDecode(parsed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := handDecode(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
