// Command rawserver is the example shop's server written with the Azure SDK's aztables
// alone, without Unified Data Tables. It exists to be measured against the server
// (tools/examples/shop/server): the same HTTP API, the same stored rows, the same answers,
// so that the difference in binary size is what the library costs (see "Binary size" in
// docs/performance.md, and "make size").
//
// It is kept minimal, but does what the server does through the library: it expands
// "UseDevelopmentStorage=true", normalises and checks keys, stores each order as a row with
// the columns the library would write (Id, CreatedAt, UpdatedAt, Lines__Json, Status,
// TotalCents as Edm.Int64), and changes a status by compare-and-swap on the row's ETag with
// a few jittered retries. It reads UNIFIED_TABLES_CONNECTION_STRING and serves:
//
//	POST /customers/{customer}/orders                  place an order; body: [{"SKU":…,"Quantity":…,"PriceCents":…}]
//	GET  /customers/{customer}/orders                  the customer's orders
//	POST /customers/{customer}/orders/{order}/ship     mark an order shipped
//	POST /customers/{customer}/orders/{order}/cancel   mark an order cancelled
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	mathrand "math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const (
	connectionEnv = "UNIFIED_TABLES_CONNECTION_STRING"
	table         = "ShopOrders"
	maxAttempts   = 5
	// devConnectionString is what "UseDevelopmentStorage=true" stands for: Azurite's
	// well-known account on its default ports (the SDK's parser does not know the shortcut).
	devConnectionString = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
		"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
)

// Line is one article of an order.
type Line struct {
	SKU        string
	Quantity   int
	PriceCents int64
}

// Order is an order as the API shows it: the shape the library's server answers with.
type Order struct {
	ID         string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ETag       string
	Timestamp  time.Time
	Lines      []Line
	Status     string
	TotalCents int64
}

// row is an order as stored, in the columns the library writes.
type row struct {
	PartitionKey, RowKey string
	ID                   string    `json:"Id"`
	CreatedAt            time.Time `json:"CreatedAt"`
	CreatedAtType        string    `json:"CreatedAt@odata.type"`
	UpdatedAt            time.Time `json:"UpdatedAt"`
	UpdatedAtType        string    `json:"UpdatedAt@odata.type"`
	Lines                string    `json:"Lines__Json"`
	Status               string
	TotalCents           string `json:"TotalCents"`
	TotalCentsType       string `json:"TotalCents@odata.type"`
	// Read only.
	ETag      string    `json:"odata.etag,omitempty"`
	Timestamp time.Time `json:"Timestamp,omitzero"`
}

var (
	errInvalid     = errors.New("shop: invalid order")
	errNoSuchOrder = errors.New("shop: no such order")
	errWrongStatus = errors.New("shop: wrong status")
	errConflict    = errors.New("shop: concurrency conflict")
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the address to listen on")
	flag.Parse()
	if err := serve(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "rawshop:", err)
		os.Exit(1)
	}
}

func serve(addr string) error {
	conn := os.Getenv(connectionEnv)
	if conn == "" {
		return fmt.Errorf("set %s to a storage account connection string", connectionEnv)
	}
	if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(conn), ";"), "UseDevelopmentStorage=true") {
		conn = devConnectionString
	}
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = svc.CreateTable(start, table, nil)
	cancel()
	if err != nil && !hasCode(err, "TableAlreadyExists") {
		return fmt.Errorf("the orders table: %w", err)
	}
	srv := &http.Server{Addr: addr, Handler: newHandler(svc.NewClient(table), randomID), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("rawshop: serving on %s, orders in table %s", addr, table)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler returns the HTTP API over the orders table.
func newHandler(c *aztables.Client, newID func() string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /customers/{customer}/orders", func(w http.ResponseWriter, r *http.Request) {
		var lines []Line
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&lines); err != nil {
			http.Error(w, "the body must be a JSON array of lines: "+err.Error(), http.StatusBadRequest)
			return
		}
		o, err := place(r.Context(), c, r.PathValue("customer"), newID(), lines)
		reply(w, http.StatusCreated, o, err)
	})
	mux.HandleFunc("GET /customers/{customer}/orders", func(w http.ResponseWriter, r *http.Request) {
		orders, err := list(r.Context(), c, r.PathValue("customer"))
		reply(w, http.StatusOK, orders, err)
	})
	for verb, to := range map[string]string{"ship": "shipped", "cancel": "cancelled"} {
		mux.HandleFunc("POST /customers/{customer}/orders/{order}/"+verb, func(w http.ResponseWriter, r *http.Request) {
			o, err := move(r.Context(), c, r.PathValue("customer"), r.PathValue("order"), to)
			reply(w, http.StatusOK, o, err)
		})
	}
	return mux
}

// key normalises a key as the library does by default (trimmed, spaces as "-", lower
// case) and refuses one the service cannot address.
func key(k string, partition bool) (string, error) {
	k = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(k), " ", "-"))
	bad := k == "" || len(k) > 512 || (partition && strings.Contains(k, "|")) ||
		strings.ContainsFunc(k, func(r rune) bool { return strings.ContainsRune(`/\#?`, r) || unicode.IsControl(r) })
	if bad {
		return "", fmt.Errorf("%w: the key %q cannot address a row", errInvalid, k)
	}
	return k, nil
}

func place(ctx context.Context, c *aztables.Client, customer, id string, lines []Line) (*Order, error) {
	if customer == "" {
		return nil, fmt.Errorf("%w: the customer id is empty", errInvalid)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: the order has no lines", errInvalid)
	}
	var total int64
	for i, l := range lines {
		if l.SKU == "" || l.Quantity < 1 || l.PriceCents < 0 {
			return nil, fmt.Errorf("%w: line %d needs a SKU, a quantity of at least 1 and a price of at least 0", errInvalid, i+1)
		}
		total += int64(l.Quantity) * l.PriceCents
	}
	pk, err := key(customer, true)
	if err != nil {
		return nil, err
	}
	rk, err := key(id, false)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(100 * time.Nanosecond) // the service keeps 100 ns ticks
	o := &Order{ID: pk + "|" + rk, CreatedAt: now, UpdatedAt: now, Lines: lines, Status: "placed", TotalCents: total}
	body, err := json.Marshal(toRow(o))
	if err != nil {
		return nil, err
	}
	resp, err := c.AddEntity(ctx, body, nil)
	if err != nil {
		return nil, fmt.Errorf("placing an order of %s: %w", customer, err)
	}
	o.ETag = string(resp.ETag)
	return o, nil
}

func list(ctx context.Context, c *aztables.Client, customer string) ([]*Order, error) {
	pk, err := key(customer, true)
	if err != nil {
		return nil, err
	}
	filter := "PartitionKey eq '" + strings.ReplaceAll(pk, "'", "''") + "'"
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	orders := []*Order{}
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the orders of %s: %w", customer, err)
		}
		for _, e := range page.Entities {
			o, err := fromRow(e, "")
			if err != nil {
				return nil, err
			}
			orders = append(orders, o)
		}
	}
	return orders, nil
}

// move changes an order's status from "placed" to to, once: a read, a check, and a write on
// condition of the ETag read, again after a lost race.
func move(ctx context.Context, c *aztables.Client, customer, order, to string) (*Order, error) {
	pk, err := key(customer, true)
	if err != nil {
		return nil, err
	}
	rk, err := key(order, false)
	if err != nil {
		return nil, err
	}
	for attempt := range maxAttempts {
		if attempt > 0 {
			wait := time.Duration(5+mathrand.IntN(5)) * time.Millisecond << (attempt - 1)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		}
		got, err := c.GetEntity(ctx, pk, rk, nil)
		if hasCode(err, "ResourceNotFound") {
			return nil, fmt.Errorf("%w: %s|%s", errNoSuchOrder, pk, rk)
		}
		if err != nil {
			return nil, fmt.Errorf("marking order %s|%s %s: %w", pk, rk, to, err)
		}
		o, err := fromRow(got.Value, string(got.ETag))
		if err != nil {
			return nil, err
		}
		if o.Status != "placed" {
			return nil, fmt.Errorf("%w: order %s is %s, not placed", errWrongStatus, o.ID, o.Status)
		}
		o.Status, o.UpdatedAt = to, time.Now().UTC().Truncate(100*time.Nanosecond)
		body, err := json.Marshal(toRow(o))
		if err != nil {
			return nil, err
		}
		etag := got.ETag
		resp, err := c.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		if hasCode(err, "UpdateConditionNotSatisfied") || hasCode(err, "ResourceNotFound") {
			continue // another writer got there first: read again
		}
		if err != nil {
			return nil, fmt.Errorf("marking order %s %s: %w", o.ID, to, err)
		}
		o.ETag = string(resp.ETag)
		return o, nil
	}
	return nil, fmt.Errorf("marking order %s|%s %s: %w", pk, rk, to, errConflict)
}

func toRow(o *Order) row {
	pk, rk, _ := strings.Cut(o.ID, "|")
	lines, _ := json.Marshal(o.Lines) // a []Line always marshals
	return row{
		PartitionKey: pk, RowKey: rk, ID: o.ID,
		CreatedAt: o.CreatedAt, CreatedAtType: "Edm.DateTime",
		UpdatedAt: o.UpdatedAt, UpdatedAtType: "Edm.DateTime",
		Lines: string(lines), Status: o.Status,
		TotalCents: strconv.FormatInt(o.TotalCents, 10), TotalCentsType: "Edm.Int64",
	}
}

// fromRow decodes a stored row; etag, when not empty, overrides the body's.
func fromRow(body []byte, etag string) (*Order, error) {
	var r row
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decoding an order: %w", err)
	}
	o := &Order{ID: r.PartitionKey + "|" + r.RowKey, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		ETag: r.ETag, Timestamp: r.Timestamp, Status: r.Status}
	if etag != "" {
		o.ETag = etag
	}
	var err error
	if o.TotalCents, err = strconv.ParseInt(r.TotalCents, 10, 64); err != nil {
		return nil, fmt.Errorf("decoding order %s: TotalCents: %w", o.ID, err)
	}
	if err := json.Unmarshal([]byte(r.Lines), &o.Lines); err != nil {
		return nil, fmt.Errorf("decoding order %s: Lines: %w", o.ID, err)
	}
	return o, nil
}

func hasCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}

// reply writes v as JSON with status, or err with the status its kind calls for.
func reply(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		code := http.StatusInternalServerError
		var re *azcore.ResponseError
		switch {
		case errors.Is(err, errInvalid):
			code = http.StatusBadRequest
		case errors.Is(err, errNoSuchOrder):
			code = http.StatusNotFound
		case errors.Is(err, errWrongStatus), errors.Is(err, errConflict):
			code = http.StatusConflict
		case errors.As(err, &re) && re.StatusCode >= 500, errors.Is(err, context.DeadlineExceeded):
			code = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
