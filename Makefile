# Entry points for people and CI. `make demo` and `make test` do all set-up on a fresh Debian
# machine (they install the Debian packages gpuplan builds with, when run as root).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEB_PACKAGES = g++ cmake make python3 libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev \
               libgtest-dev libbenchmark-dev clang chromium python3-torch \
               pkg-config libcurl4-openssl-dev libcpp-httplib-dev libre2-dev prometheus zsh fish

.PHONY: deps build demo test install install-files asan fuzz bench clean
PREFIX ?= /usr/local

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "run as root, or: sudo apt-get install$$missing"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@command -v npm >/dev/null || { [ "$$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; }
	@# puppeteer-core drives Debian's Chromium in the browser tests (tests/browser/package-lock.json).
	@[ -d tests/browser/node_modules/puppeteer-core ] || (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

# -O2 without debug information: it costs a third of the compile time on CI's two cores; the
# sanitizer build keeps -g for its reports. Both compile in unity batches of 8 sources (the heavy
# headers, toml++, fmt, nlohmann-json, CLI11, parsed once a batch): less than half the build time.
UNITY = -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8
$(BUILD)/Makefile: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" $(UNITY)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/gpuplan advise

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Puts gpuplan on PATH under $(PREFIX)/bin, with its man page and bash/zsh/fish completions, all
# generated from the binary's own command table.
install: build install-files

# The copying half of `make install`, for a binary built already (the tests use it).
install-files:
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BUILD)/gpuplan $(DESTDIR)$(PREFIX)/bin/gpuplan
	$(BUILD)/gpuplan manpage > $(DESTDIR)$(PREFIX)/share/man/man1/gpuplan.1
	$(BUILD)/gpuplan completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpuplan
	$(BUILD)/gpuplan completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_gpuplan
	$(BUILD)/gpuplan completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/gpuplan.fish
	@echo "installed $(DESTDIR)$(PREFIX)/bin/gpuplan (put $(PREFIX)/bin on PATH if it is not)"

# One clang build with ASan + UBSan and libFuzzer's coverage hooks serves both `make asan` and
# `make fuzz` (-O1 keeps it quick to compile and to run; there are no assert()s to lose).
SAN_BUILD = $(BUILD)-asan
$(SAN_BUILD)/Makefile: deps
	CXX=clang++ cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
	  -DGPUPLAN_SANITIZE=ON -DGPUPLAN_FUZZ=ON -DGPUPLAN_BENCH=OFF $(UNITY)

# The tests under ASan + UBSan (the unit tests in three processes: CMakeLists.txt says why). The CLI script
# and the report read in Chromium run only in `make test`: they drive the same code that the
# hostile-input test, cli_conventions and fuzz_cli run here, and under the sanitizers they took
# eight of CI's thirty minutes.
SAN_SKIP = ^(cli_tests|html_report_a_manager_can_sign)$$
asan: $(SAN_BUILD)/Makefile
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -E '$(SAN_SKIP)'

# libFuzzer targets for each parser of outside files and for whole command lines (fuzz_cli), each
# run briefly from its seed corpus. The library is instrumented too (coverage and sanitizers reach
# the parsers); each target's final coverage (libFuzzer's cov: edges, ft: features) is printed.
FUZZ_SECONDS ?= 15
FUZZ_TARGETS = config_json safetensors gguf workload_toml profile_summary trace cli
fuzz: $(SAN_BUILD)/Makefile
	cmake --build $(SAN_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(SAN_BUILD)/corpus-$$t && { [ ! -d fuzz/corpus/$$t ] || cp fuzz/corpus/$$t/* $(SAN_BUILD)/corpus-$$t/; } && \
	  ./$(SAN_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=60 -max_len=65536 -artifact_prefix=$(SAN_BUILD)/ $(SAN_BUILD)/corpus-$$t \
	    >$(SAN_BUILD)/fuzz_$$t.log 2>&1 || { tail -n 60 $(SAN_BUILD)/fuzz_$$t.log; echo "fuzz_$$t: FAILED"; exit 1; }; \
	  echo "fuzz_$$t: $$(grep -E '^#[0-9]+[[:space:]]+DONE' $(SAN_BUILD)/fuzz_$$t.log | tail -n 1)"; \
	done

bench: build
	for b in $(BUILD)/bench_*; do [ -x $$b ] && FAKE_NVML_SCENARIO=$(CURDIR)/tests/scenarios/memory_bound.json \
	  GPUPLAN_BENCH_NVML=$(CURDIR)/$(BUILD)/fake-driver/libnvidia-ml.so.1 $$b; done

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
