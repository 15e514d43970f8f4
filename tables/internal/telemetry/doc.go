// Package telemetry owns what the library tells a program's observability: one span and one
// measurement per call of a store, a polymorphic store, a transaction or a blob document
// handle, the outcome verbs' lost attempts, and the account-wide counts (retries, busy
// answers, own echoes, cache lookups and evictions, batch parallelism, offloaded bytes).
//
// Its one entry point is [Telemetry], built once per account from the account's options:
// [Telemetry.Begin] starts a call, [Call.Finish] ends it. A Telemetry without a tracer and
// without meters (the default) builds nothing per call: no span, no attribute, no reading of
// the clock. Instrument names, attribute keys and their meanings are listed for users in
// docs/production.md; they are defined here and nowhere else.
//
// It refuses nothing and never fails a call: an instrument the meter provider refuses is
// logged once and records nothing.
package telemetry
