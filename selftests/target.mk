# SPDX-License-Identifier: GPL-2.0-only
# Common part of every selftests/<target>/Makefile: the kernel's lib.mk for
# running (run_tests, KTAP), our own rule for building (sanitizers, libroxe,
# header dependencies). Set TEST_GEN_PROGS / TEST_PROGS first.
CC := $(ROXE_CC)
CFLAGS += $(ROXE_CFLAGS)
LDLIBS += $(ROXE_LIBS)
OVERRIDE_TARGETS := 1

include $(KSFT_DIR)/lib.mk

$(OUTPUT)/%: %.c $(TOP)/build/lib/libroxe-san.a
	$(CC) $(CFLAGS) $< $(LDLIBS) -o $@

-include $(TEST_GEN_PROGS:=.d)
