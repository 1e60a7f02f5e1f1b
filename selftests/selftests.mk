# SPDX-License-Identifier: GPL-2.0-only
# Included by the top-level Makefile: extracts the kernel's kselftest
# harness from Debian's linux-source-6.1 and runs every target below
# selftests/ through lib.mk's run_tests, KTAP on stdout, then one summary
# line ("selftests: N passed, N failed, N skipped").
#
#   make kselftest                      all targets
#   make kselftest TARGETS="wire"       some targets
#   make kselftest-build                build only

KSFT_SRC  ?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.*))
KSFT_DIR  := $(BUILD)/kselftest
KSFT_STAMP := $(KSFT_DIR)/.extracted
TARGETS   ?= $(patsubst selftests/%/Makefile,%,$(wildcard selftests/*/Makefile))
KSFT_LOG  := $(BUILD)/selftests/kselftest.ktap

# What a target's Makefile gets from us (besides lib.mk's variables).
KSFT_ENV  = TOP=$(TOP) KSFT_DIR=$(KSFT_DIR) ROXE_CC="$(CC)" \
	ROXE_CFLAGS="-O1 -g $(SAN_FLAGS) $(ROXE_CFLAGS) $(PRIV_CFLAGS) -isystem $(KSFT_DIR)" \
	ROXE_LIBS="$(LIBROXE_SAN) $(LDLIBS)" \
	OUTPUT=$(BUILD)/selftests/$$t

.PHONY: kselftest kselftest-build kselftest-harness
kselftest-harness: $(KSFT_STAMP)

$(KSFT_STAMP):
	@if [ -z "$(KSFT_SRC)" ]; then \
		echo "kselftest: /usr/src/linux-source-6.1.tar.xz is missing:" \
		     "run tools/scripts/install-deps.sh (linux-source-6.1)" >&2; exit 1; fi
	@echo "  EXTRACT kselftest harness from $(notdir $(KSFT_SRC))"
	@rm -rf $(KSFT_DIR).tmp && mkdir -p $(KSFT_DIR).tmp
	@tar -xf $(KSFT_SRC) -C $(KSFT_DIR).tmp --strip-components=4 \
		--wildcards '*/tools/testing/selftests/lib.mk' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest/runner.sh' \
		'*/tools/testing/selftests/kselftest/prefix.pl'
	@rm -rf $(KSFT_DIR) && mv $(KSFT_DIR).tmp $(KSFT_DIR)
	@touch $@

# Each target is reached through a link inside the harness directory, so
# runner.sh (which finds a target's "settings" file relative to lib.mk)
# sees the same layout as in the kernel tree.
kselftest-build: $(KSFT_STAMP) $(LIBROXE_SAN) all
	@for t in $(TARGETS); do \
		ln -sfn $(TOP)/selftests/$$t $(KSFT_DIR)/$$t; \
		mkdir -p $(BUILD)/selftests/$$t; \
		(cd $(KSFT_DIR)/$$t && $(MAKE) --no-print-directory $(KSFT_ENV) all) \
			|| exit 1; \
	done

kselftest: kselftest-build
	@mkdir -p $(dir $(KSFT_LOG))
	@for t in $(TARGETS); do \
		(cd $(KSFT_DIR)/$$t && $(MAKE) -s --no-print-directory $(KSFT_ENV) \
			run_tests); \
	done 2>&1 | tee $(KSFT_LOG)
	@$(TOP)/tools/scripts/ktap-summary $(KSFT_LOG)
