package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// Reading is one sensor reading; its row key orders the readings of a sensor.
type Reading struct {
	abstractions.Entity
	Celsius float64
	Alarm   bool
	Site    string
}

// The fields of Reading that queries compare. A field is resolved once, so build it once
// (a package-level variable) and reuse it.
var (
	celsius = abstractions.Field(func(r *Reading) *float64 { return &r.Celsius })
	site    = abstractions.Field(func(r *Reading) *string { return &r.Site })
	alarm   = abstractions.Field(func(r *Reading) *bool { return &r.Alarm })
)

// readings returns a store holding readings 00 to 09 of sensor s1 (0 to 45 °C, the kitchen
// for even ones, an alarm from 40 °C) and one of sensor s2.
func readings(ctx context.Context) *tables.Store[Reading] {
	store, err := tables.For[Reading](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	var batch []*Reading
	for i := range 10 {
		where := "hall"
		if i%2 == 0 {
			where = "kitchen"
		}
		batch = append(batch, &Reading{
			Entity:  abstractions.Entity{ID: fmt.Sprintf("s1|%02d", i)},
			Celsius: float64(i * 5), Alarm: i*5 >= 40, Site: where,
		})
	}
	batch = append(batch, &Reading{Entity: abstractions.Entity{ID: "s2|00"}, Celsius: 50, Alarm: true, Site: "kitchen"})
	if err := store.CreateBatch(ctx, batch); err != nil {
		log.Fatal(err)
	}
	return store
}

// Typed filters are built from field selectors, so the compiler checks the fields they
// name; the service evaluates them. A filter the service could not answer exactly as
// written is refused before anything is sent.
func Example_filter() {
	ctx := context.Background()
	store := readings(ctx)

	warmKitchen, err := store.Query(ctx, abstractions.Query[Reading]{
		Partition: "s1",
		Where:     abstractions.And(celsius.Ge(20), site.Eq("kitchen")),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range warmKitchen {
		fmt.Println(r.ID, r.Celsius)
	}

	// Across partitions, with a bare Boolean condition.
	alarms, err := store.Query(ctx, abstractions.Query[Reading]{
		Where: abstractions.IsTrue(alarm),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("alarms:", len(alarms))

	// Ne on a string field is refused: a row without the column would not match on the
	// service, although its Go value differs.
	_, err = store.Query(ctx, abstractions.Query[Reading]{Where: site.Ne("hall")})
	fmt.Println(errors.Is(err, abstractions.ErrNotSupported))
	// Output:
	// s1|04 20
	// s1|06 30
	// s1|08 40
	// alarms: 3
	// true
}

// Page reads one page at a time; the cursor of a page resumes the query after it, in this
// process or in another one (a cursor is text: hand it to a client).
func Example_page() {
	ctx := context.Background()
	store := readings(ctx)

	q := abstractions.Query[Reading]{Partition: "s1", Take: 4} // Take is the page size
	for {
		page, err := store.Page(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		var ids []string
		for _, r := range page.Items {
			ids = append(ids, r.ID)
		}
		fmt.Println(ids)
		if !page.HasMore() {
			break
		}
		q.Cursor = page.Cursor
	}
	// Output:
	// [s1|00 s1|01 s1|02 s1|03]
	// [s1|04 s1|05 s1|06 s1|07]
	// [s1|08 s1|09]
}
