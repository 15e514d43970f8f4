// Package faults injects the failures a network and a busy service cause, so that tests can
// check what a program does when they happen: a response lost after the service applied the
// request, a connection reset half-way through a response body or while the request is
// being sent, 500 and 503 answers, a request that stalls past its deadline before or after
// the service applied it.
//
// Two injectors share one set of faults ([Fault]) and one way of choosing the calls they
// hit ([Calls], [Plan]):
//
//   - [Transport] sits between the Azure SDK and the network: set it as
//     tables.Options.ClientOptions.Transport. The SDK's own retry policy then meets the
//     faults as it would meet real ones (it resends after a lost response, a reset
//     mid-request, a 500 or a 503, but not after a reset mid-body of a POST).
//   - [Tables] wraps any service.Tables, such as the in-memory service
//     (inmemory.NewAccountOver(faults.NewTables(memservice.New()), …)), and retries as the
//     SDK does with its default of three retries, without waiting between tries, so a test
//     of the in-memory backend meets the same outcomes. The in-memory account recognises
//     it and adds no retries of its own (tables.Options.ClientOptions.Retry): a call makes at most four
//     tries, as through the SDK.
//
// Both count each try in the call's attempt counter, which is how the engine learns that a
// refusal may answer a resend of a write it had already applied.
//
// A fault is consumed by the first call it matches; calls with no fault pending go through
// untouched. Both injectors are safe for concurrent use.
package faults
