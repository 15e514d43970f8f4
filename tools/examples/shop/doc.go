// Package shop is an example application that shows the three ways the modules of Unified
// Data Tables are used:
//
//   - domain: the entities, the repository contract and the business logic. It imports only
//     the abstractions module and the standard library, so it compiles without any storage
//     SDK.
//   - server: the host. Its main wires the Azure backend (tables.NewAccount from a
//     connection string in the environment) into the domain and serves a small HTTP API.
//   - domain's tests: they wire the in-memory backend (inmemory.NewAccount), which behaves
//     like Azure and needs no emulator and no network.
//
// Both backends return the same *tables.Account, so the store is wired once, by Orders
// (its type, table and options), and the server and the tests differ only in the account
// they pass it.
//
// The test of this package checks those boundaries with "go list -deps": the domain package
// pulls in no Azure SDK package, and neither does its in-memory test build.
//
// rawserver is the server again, written with the Azure SDK's aztables alone: the same API
// and the same stored rows. It is the yardstick of the library's binary size: a test of
// this package builds both stripped and checks that the server is at most 1.15 times the
// size of rawserver ("make size" runs it and prints the sizes).
package shop
