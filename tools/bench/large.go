package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// LargeNote is the entity of the large-value workloads: one text field stored split.
type LargeNote struct {
	abstractions.Entity
	Body string `table:",split=text"`
}

// largeValue is the value of the large-value workloads: n ASCII characters (at the full
// size, 1,000,000: 2 MB as the service counts text, in 32 chunks over three rows).
func largeValue(n int) string {
	return strings.Repeat("the quick brown fox jumps over the lazy dog. ", n/45+1)[:n]
}

const (
	largeChunk   = 32_000 // characters of one text chunk
	largeMainCap = 14     // chunks on the main row; the rest 15 to a continuation row
	largeContCap = 15
)

// rawLargeEntities returns the rows of a split 1 MB text value as the library lays them
// out, built by hand as a program using the raw SDK would: the main row with the manifest
// and the first chunks, then continuation rows.
func rawLargeEntities(pk, rk, largeText string) ([][]byte, error) {
	var chunks []string
	for s := largeText; len(s) > 0; {
		n := min(len(s), largeChunk)
		chunks = append(chunks, s[:n])
		s = s[n:]
	}
	sum := sha256.Sum256([]byte(largeText))
	rows := []map[string]any{{
		"PartitionKey": pk, "RowKey": rk, "Id": pk + "|" + rk,
		"Body__chunks": len(chunks), "Body__sha256": hex.EncodeToString(sum[:]), "Body__enc": "text",
		"Body__len": fmt.Sprint(len(largeText)), "Body__len@odata.type": "Edm.Int64",
	}}
	row := rows[0]
	for i, c := range chunks {
		if i == largeMainCap || (i > largeMainCap && (i-largeMainCap)%largeContCap == 0) {
			row = map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("%s~%04d", rk, len(rows)),
				"_SplitOf": rk, "_SplitIndex": len(rows)}
			rows = append(rows, row)
		}
		row[fmt.Sprintf("Body__c%d", i)] = c
	}
	rows[0]["_SplitParts"] = len(rows)
	out := make([][]byte, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// largeWorkloads writes and reads a 1 MB text value: the library's split-aware store
// against the same rows written by hand with the raw SDK in one transaction, and read back
// with a point read and a range query.
func (s *sides) largeWorkloads(cfg Config) []workload {
	store, err := tables.For[LargeNote](s.store.Account(), &tables.StoreOptions{Table: s.table})
	if err != nil {
		return nil
	}
	ops := max(3, cfg.Ops/10)
	largeText := largeValue(s.sz.LargeChars)
	write := workload{name: s.sz.largeName("write"), ops: ops, target: targetRatio,
		library: func(ctx context.Context, w, _ int) error {
			return store.Upsert(ctx, &LargeNote{Entity: abstractions.Entity{ID: fmt.Sprintf("largelib|w%d", w)}, Body: largeText})
		},
		raw: func(ctx context.Context, w, _ int) error {
			ents, err := rawLargeEntities("largeraw", fmt.Sprintf("w%d", w), largeText)
			if err != nil {
				return err
			}
			acts := make([]aztables.TransactionAction, len(ents))
			for i, e := range ents {
				acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: e}
			}
			_, err = s.raw.SubmitTransaction(ctx, acts, nil)
			return err
		},
	}
	read := workload{name: s.sz.largeName("read"), ops: ops, target: targetRatio,
		library: func(ctx context.Context, _, _ int) error {
			v, err := store.One(ctx, "largelib|w0")
			if err == nil && len(v.Body) != len(largeText) {
				err = fmt.Errorf("read %d characters, want %d", len(v.Body), len(largeText))
			}
			return err
		},
		raw: func(ctx context.Context, _, _ int) error {
			resp, err := s.raw.GetEntity(ctx, "largeraw", "w0", nil)
			if err != nil {
				return err
			}
			var main map[string]any
			if err := json.Unmarshal(resp.Value, &main); err != nil {
				return err
			}
			cells := map[string]string{}
			for k, v := range main {
				if str, ok := v.(string); ok && strings.HasPrefix(k, "Body__c") {
					cells[k] = str
				}
			}
			filter := "PartitionKey eq 'largeraw' and RowKey ge 'w0~0001' and RowKey le 'w0~0099'"
			pager := s.raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					return err
				}
				for _, e := range page.Entities {
					var m map[string]any
					if err := json.Unmarshal(e, &m); err != nil {
						return err
					}
					for k, v := range m {
						if str, ok := v.(string); ok && strings.HasPrefix(k, "Body__c") {
							cells[k] = str
						}
					}
				}
			}
			n := int(main["Body__chunks"].(float64))
			var b strings.Builder
			for i := range n {
				b.WriteString(cells[fmt.Sprintf("Body__c%d", i)])
			}
			if b.Len() != len(largeText) {
				return fmt.Errorf("read %d characters, want %d", b.Len(), len(largeText))
			}
			return nil
		},
	}
	return []workload{write, read}
}
