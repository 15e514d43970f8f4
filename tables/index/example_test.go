package index_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/index"
)

// An order type with two indexes: by number, and newest first.
type Order struct {
	abstractions.Entity
	Number int64     `table:",index=number"`
	Placed time.Time `table:",index=newest:desc"`
}

// Find the orders of a tenant with a number.
func ExampleIndex_Find() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	byNumber, err := index.On(orders, "number")
	if err != nil {
		log.Fatal(err)
	}
	found, err := byNumber.Find(ctx, "tenant-42", 1042)
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range found {
		fmt.Println(o.ID)
	}
}

// List a tenant's orders newest first, a page at a time.
func ExampleIndex_Page() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	newest, err := index.On(orders, "newest")
	if err != nil {
		log.Fatal(err)
	}
	cursor := ""
	for {
		page, err := newest.Page(ctx, index.Range{}, abstractions.Query[Order]{Partition: "tenant-42", Take: 100, Cursor: cursor})
		if err != nil {
			log.Fatal(err)
		}
		for _, o := range page.Items {
			fmt.Println(o.ID, o.Placed)
		}
		if !page.HasMore() {
			break
		}
		cursor = page.Cursor
	}
}
