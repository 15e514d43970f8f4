// Package fidelity is the differential suite: every scenario runs on Azurite and on the
// in-memory service, records what it observed (results, errors as status and code, rows and
// blobs left behind, with ETags and service times normalised), checks its own expectations on
// each backend, and requires the observation logs to be equal.
//
// The suite has one entry point, RunConformanceTests, which a backend joins with a
// HarnessMaker, as gocloud.dev's drivertest does; TestConformance passes the Azurite and the
// memory service's makers. Scenarios (Scenario, Env) and their fixtures are the package's
// own.
//
// Where Azurite 3.35 is known to answer differently from the real Azure service, the memory
// service follows Azure; the scenario names the entry of Deviations and asserts each
// backend's own answer. The engine never sends those requests.
//
// Run it with `make test`, which starts Azurite and exports
// UNIFIED_TABLES_TEST_CONNECTION_STRING. Without that variable only the memory half runs,
// unless UNIFIED_TABLES_REQUIRE_AZURITE=1, which turns the missing emulator into a failure.
//
// `make emulator-fidelity` runs the suite with this repository's table emulator
// (inmemory/emulator) in Azurite's place: with UNIFIED_TABLES_TEST_EMULATOR=1 the connection
// string names the emulator, the backend is called "emulator" and expected to answer as
// Azure does, and its blobs are a memory service of their own. The emulator's cross-client
// and wire matrices (TestEmulatorMatrix, TestEmulatorWire) compare it with Azurite directly.
package fidelity
