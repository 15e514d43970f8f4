package fidelity

import (
	"github.com/unified-data/gotables/tables/service"
)

// serviceScenarios returns every scenario of the service layer: raw table and blob
// operations run on both services.
func serviceScenarios() []Scenario {
	var all []Scenario
	for _, group := range [][]Scenario{tableScenarios, rowScenarios, limitScenarios, transactionScenarios, queryScenarios, blobScenarios} {
		all = append(all, group...)
	}
	all = append(all, codecScenarios...)
	all = append(all, typeMismatchScenarios...)
	return all
}

// storeScenarios returns every scenario of the store layer: Storage[T] behaviour run by the
// engine over each service.
func storeScenarios() []Scenario {
	all := append([]Scenario(nil), storeBasics...)
	all = append(all, storeTableScenarios...)
	all = append(all, missingTableScenarios...)
	all = append(all, etagShapeScenarios...)
	all = append(all, mutateScenarios...)
	all = append(all, hotRowScenarios...)
	all = append(all, queryStoreScenarios...)
	all = append(all, planScenarios...)
	all = append(all, deleteWhereScenarios...)
	all = append(all, csvScenarios...)
	all = append(all, typeMismatchStoreScenarios...)
	all = append(all, emptyKeyScenarios...)
	all = append(all, cacheScenarios...)
	all = append(all, blobDocScenarios()...)
	all = append(all, polyScenarios()...)
	all = append(all, sharedScenarios()...)
	all = append(all, ixScenarios()...)
	all = append(all, expiryScenarios()...)
	all = append(all, expirySweepScenarios()...)
	all = append(all, feedScenarios()...)
	all = append(all, feedPolyScenarios()...)
	all = append(all, identityScenarios()...)
	all = append(all, largeScenarios()...)
	all = append(all, safetyScenarios()...)
	all = append(all, offloadScenarios()...)
	all = append(all, blobFailureScenarios()...)
	all = append(all, scaleScenarios()...)
	all = append(all, reliabilityScenarios()...)
	return all
}

// row builds a row from its keys and name/value pairs.
func row(pk, rk string, nameValues ...any) service.Row {
	r := service.Row{PartitionKey: pk, RowKey: rk}
	for i := 0; i+1 < len(nameValues); i += 2 {
		r.Properties = append(r.Properties, service.Property{Name: nameValues[i].(string), Value: nameValues[i+1].(service.Value)})
	}
	return r
}

func insert(r service.Row) service.Action { return service.Action{Op: service.OpInsert, Row: r} }

func keysOf(rows []service.Row) []string {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.PartitionKey + "|" + r.RowKey
	}
	return keys
}
