# Unified Data Tables for Go: build, test and lint tasks. "make" alone lists them.
#
# The tests run against the Azurite emulator, which "make test" and "make bench" install into
# .cache/azurite (from npm, once; Node.js 20 needed) and start on 127.0.0.1, then stop again.
# An emulator already answering on the ports is reused and left running.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.ONESHELL:

# Extra flags for go test, e.g. make test GOTESTFLAGS='-run TestRows -v'.
GOTESTFLAGS ?=
# Fuzzing time per target.
FUZZTIME ?= 10s
# A connection string for "make demo"; without it the demo runs in memory.
CONN ?=
# "make release": the version; DRY_RUN=0 commits and tags, PUSH=1 pushes as well.
VERSION ?=
DRY_RUN ?= 1
PUSH ?= 0

export FUZZTIME

.PHONY: help test demo bench files-bench backup-bench backup-long lint tidy fuzz soak faults-full cosmos expiry-bench feed-full feed-bench size consumer-check release azurite-start azurite-stop emulator emulator-fidelity emulator-azurite-suite

help: ## List the targets.
	@echo "Targets:"
	grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{ printf "  %-14s %s\n", $$1, $$2 }'

test: ## Run every module's tests with -race, Azurite started and stopped around them; each package's result as it finishes, the slowest at the end.
	@pkgs=$$(bash scripts/packages.sh)
	if [[ -z $$pkgs ]]; then echo "no packages to test"; exit 0; fi
	mkdir -p .cache
	go build -o .cache/testreport ./tools/cmd/testreport
	# -timeout 30m: go test stops a package's test binary after 10 minutes by default, and on a
	# 2-core machine shared with other jobs the fidelity package under -race has needed more
	# than that without hanging. 30 minutes still stops a test that hangs; the report names the
	# tests that were running. GOTESTFLAGS='-timeout 60m' overrides it (the last flag counts).
	bash scripts/with-azurite.sh bash -o pipefail -c 'go test -json -race -count=1 -timeout 30m $(GOTESTFLAGS) "$$@" 2>&1 | .cache/testreport' test $$pkgs

demo: ## Run the udtables demo (in memory, or on CONN=<connection string>).
	@go run ./tools/cmd/udtables demo $(if $(CONN),--connection-string '$(CONN)')

bench: ## Run the harness's tests at full size, the side-by-side harness and every benchmark against Azurite; output in tools/bench-results/latest.txt, chart in docs/performance.svg.
	@pkgs=$$(bash scripts/packages.sh)
	mkdir -p tools/bench-results
	# One emulator session for both parts; BENCH_OPS sets the harness's --ops (default 1000).
	# The harness's progress goes to the terminal, its table and the benchmarks to the file.
	bash scripts/with-azurite.sh bash -euo pipefail -c '
		ops=$${BENCH_OPS:-1000}
		# The harness tests at the full sizes; make test runs them over tiny data.
		echo "== UNIFIED_TABLES_BENCH_LONG=1 go test ./tools/bench/: the workloads at their full sizes"
		UNIFIED_TABLES_BENCH_LONG=1 go test -count=1 ./tools/bench/
		echo
		echo "== udtables bench --ops $$ops: the library against hand-written Azure SDK code, then the memory backend"
		go run ./tools/cmd/udtables bench --ops "$$ops"
		echo
		echo "== go test -bench . -benchmem"
		go test -run "^$$" -bench . -benchmem $(GOTESTFLAGS) "$$@"
	' bench $$pkgs | tee tools/bench-results/latest.txt.tmp
	mv tools/bench-results/latest.txt.tmp tools/bench-results/latest.txt
	echo "written to tools/bench-results/latest.txt"
	# The chart of the docs, redrawn from this run's table.
	go run ./tools/cmd/benchchart -in tools/bench-results/latest.txt -out docs/performance.svg
	echo "chart drawn in docs/performance.svg"
	echo "docs/performance.md's marked tables quote the previous run until updated: go test ./tools/cmd/benchchart/ -run TestDocsQuoteLatest says where"

files-bench: ## Write and read back a 200 MB file through Azurite: heap bound test, then library and azblob interleaved, medians and ratio (FILES_TEST_MB sets the size, FILES_BENCH_ROUNDS the rounds).
	@FILES_TEST_MB=$${FILES_TEST_MB:-200} bash scripts/with-azurite.sh bash -euo pipefail -c '
		go test -count=1 -v -run "^TestFileHeapBound$$" ./tables/azblobs/ | grep -E "files_test|^(---|ok|FAIL)"
		go test -run "^$$" -bench "^BenchmarkFileRoundTrip$$" -benchtime=$${FILES_BENCH_ROUNDS:-7}x -count=1 ./tables/azblobs/
	'

backup-bench: ## Back up and restore 100,000 rows on Azurite with tables/backup and with hand-written aztables code; the ratio and heap growth (BACKUP_ROWS sets the rows).
	@UNIFIED_TABLES_BACKUP_BENCH_ROWS=$${BACKUP_ROWS:-100000} bash scripts/with-azurite.sh \
		go test -count=1 -timeout 60m -v -run '^TestBackupBenchmark$$' ./tools/bench/ | grep -vE '^=== RUN'

backup-long: ## Interrupt and resume a backup of 20,000 rows on Azurite at random points; the archives must be identical (BACKUP_ROWS sets the rows).
	@UNIFIED_TABLES_BACKUP_ROWS=$${BACKUP_ROWS:-20000} bash scripts/with-azurite.sh \
		go test -count=1 -timeout 60m -v -run '^TestInterruptAndResume$$' ./tables/backup/ | grep -E '^(---|ok|FAIL)|backup_test'

emulator: ## Run the emulator (tools/cmd/udtables-emulator): tables on 127.0.0.1:10002, blobs on 127.0.0.1:10000, until Ctrl-C.
	@go run ./tools/cmd/udtables-emulator

emulator-fidelity: ## Run the fidelity suite with the emulator in place of Azurite (EMULATOR_TABLE_PORT 20002, EMULATOR_BLOB_PORT 20000); it must equal the memory half.
	@bash scripts/with-emulator.sh go test -count=1 -timeout 30m $(GOTESTFLAGS) ./fidelity/

emulator-azurite-suite: ## Run Azurite's own table tests (pinned commit, needs the network once) against the table emulator; TARGET=azurite for the baseline. Not part of make test.
	@bash tools/azuritesuite/run.sh $(or $(TARGET),emulator)

size: ## Build the shop server and its raw-aztables twin stripped; check their size ratio.
	@go test -count=1 -v -run '^TestServerSizeWithinRawBudget$$' ./tools/examples/shop/ | grep -E 'stripped:|^(---|ok|FAIL)'

lint: ## Check gofmt, go vet, staticcheck, the modules' pins on each other and go mod tidy.
	@bash scripts/lint.sh

tidy: ## Run go mod tidy in every module, its siblings served from an on-disk proxy.
	@bash scripts/release-tool.sh tidy

consumer-check: ## Build, vet and test every module, and build a program outside the repository, from an on-disk proxy.
	@VERSION='$(VERSION)' bash scripts/consumer-check.sh

release: ## Release at VERSION=v0.x.y: prints the plan; DRY_RUN=0 commits and tags, PUSH=1 pushes.
	@VERSION='$(VERSION)' DRY_RUN='$(DRY_RUN)' PUSH='$(PUSH)' bash scripts/release.sh

fuzz: ## Run each fuzz target for FUZZTIME (10s).
	@bash scripts/fuzz.sh

faults-full: ## Run the indexed stores', the unique indexes' and the change feed's fault matrices with every fault (make test runs the faults that lose or break an answer) on Azurite and in memory.
	@UNIFIED_TABLES_FAULTS_FULL=1 bash scripts/with-azurite.sh go test -count=1 -race -run '^(TestIndexFaultMatrix|TestUniqueFaultMatrix|TestFeedFaultMatrix)$$' -v ./fidelity/ | grep -E '^(---|ok|FAIL|PASS)|faults_indexes_test|faults_unique_test|feed_crash_test'

cosmos: ## Run every fidelity scenario on the memory service and on its Cosmos DB for Table profile, blob scenarios included (make test leaves those out), and compare (fidelity/cosmos_deviations.go lists the differences).
	@cd fidelity && UNIFIED_TABLES_COSMOS_FULL=1 go test -count=1 -race -run '^TestCosmosProfile$$' .

feed-full: ## Run the change feed's relay race at full size (1,000 partitions, 20,000 writes, four relays) on Azurite and in memory.
	@UNIFIED_TABLES_FEED_FULL=1 bash scripts/with-azurite.sh go test -count=1 -timeout 30m -run '^TestFeedRelayRace$$' -v ./fidelity/ | grep -E '^(---|ok|FAIL|PASS)|feed_test'

feed-bench: ## Benchmark a change feed relay pass over 10 pending partitions, with and without 10,000 partitions of history (time and requests per pass).
	@cd fidelity && go test -run '^$$' -bench '^BenchmarkFeedPass$$' -benchtime 50x .

expiry-bench: ## Benchmark a sweep of 1,000 expired rows among 100,000 against one of those 1,000 alone, in memory and on Azurite (EXPIRY_ROWS=100000).
	@cd fidelity && UNIFIED_TABLES_EXPIRY_BENCH_ROWS='$(EXPIRY_ROWS)' go test -count=1 -run '^$$' -bench '^BenchmarkSweep$$/^memory' -benchtime 5x .
	@UNIFIED_TABLES_EXPIRY_BENCH=1 UNIFIED_TABLES_EXPIRY_BENCH_ROWS='$(EXPIRY_ROWS)' bash scripts/with-azurite.sh bash -c 'cd fidelity && go test -count=1 -run "^$$" -bench "^BenchmarkSweep$$/^azurite" -benchtime 1x -timeout 60m .'

soak: ## Run the soak test long (SOAK_OPS=1000 operations per goroutine, 32 goroutines) on Azurite and in memory.
	@UNIFIED_TABLES_SOAK_OPS=$${SOAK_OPS:-1000} bash scripts/with-azurite.sh go test -count=1 -timeout 30m -run '^TestSoak$$' -v ./fidelity/ | grep -E '^(---|ok|FAIL|PASS)|soak_test'

azurite-start: ## Start Azurite (or reuse a running one) and leave it running.
	@bash scripts/azurite.sh start
	echo "for the tests in this shell: eval \"\$$(bash scripts/azurite.sh env)\""

azurite-stop: ## Stop the Azurite that azurite-start started.
	@bash scripts/azurite.sh stop
