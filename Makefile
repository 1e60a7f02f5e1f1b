# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe: RoCE v2 over XDP engine. One Makefile builds everything but the
# kernel module (Kbuild) and the kselftest programs (the kernel's lib.mk).
#
#   make            bpf objects + skeletons, libroxe, tools in build/bin/
#   make check      install deps, build, run every kselftest
#   make demo       install deps, build, run the two-namespace demo
#   make bench      install deps, build, run the benchmarks
#   make bench-vm   install deps, build, roxe0 beside kernel rxe in the VM
#                   guest (perftest bandwidth and latency, and the ratio),
#                   then bench-vm-zc
#   make bench-vm-zc  AF_XDP copy vs zero-copy, roxe vs rxe, on virtio-net
#                   and igb in the trixie-bpo guest
#   make soak       install deps, build, 10 minutes of verified RC traffic
#                   through a lossy hop (manual, not in check)
#   make kmod       build roxe.ko: build/kmod/roxe.ko against the running
#                   kernel's headers (or KDIR=), build/kmod/<release>/ for
#                   each VM guest kernel (VM_KERNELS, default 6.1 6.12
#                   trixie-bpo; trixie's in a chroot, tools/vm/README.md)
#   make kernels    fetch the VM guest kernels (image, modules, headers)
#                   into build/vm/kernels/, never installed
#   make deps       install every Debian package roxe needs; deps-demo,
#                   deps-bench, deps-check: only what that target needs
#   make install    install (PREFIX=/usr/local, DESTDIR=; see "Install" below)
#   make uninstall  remove exactly what make install put there
#   make deb        Debian packages (debian/) into build/deb/
#   make clean

TOP      := $(abspath .)
BUILD    := $(TOP)/build
BIN      := $(BUILD)/bin
OBJ      := $(BUILD)/obj
OBJ_SAN  := $(BUILD)/obj-san
OBJ_PIC  := $(BUILD)/obj-pic
GEN_INC  := $(BUILD)/include

CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH_INC := /usr/include/$(shell $(CC) -dumpmachine)

CFLAGS   ?= -O2 -g
# CPPFLAGS and LDFLAGS: a packager's (dpkg-buildflags: _FORTIFY_SOURCE,
# relro), on the compile and link lines of what make install installs.
VERSION  := 0.1.0
# The headers of include/, three kinds, each included as "roxe/NAME.h":
#   include/uapi/roxe/     the ABI: roxe.ko's (kabi.h), roxed's status
#                          socket (ctl.h); first, as the kernel puts its own
#   include/roxe/          what make install installs: the verbs API
#                          (ROXE_0.1 in user/libroxe.map) and the header-only
#                          contracts shared with bpf/ and kmod/
#   include/private/roxe/  roxe's own, not installed: the building blocks
#                          its tools link (ROXE_PRIVATE), roxed's and the
#                          tools' shared headers
# That is what tools build with. libroxe's own sources and the white-box
# tests add its private headers (user/); roxed adds them for
# user/verbs/served.h alone (selftests/docs/api_test.sh).
INC_FLAGS := -I$(TOP)/include/uapi -I$(TOP)/include -I$(TOP)/include/private
ROXE_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	$(INC_FLAGS) -I$(GEN_INC) -MMD -MP
# libnl-route-3: rtnetlink (address events) for libroxe's own sources.
LIBNL_CFLAGS := $(shell pkg-config --cflags libnl-route-3.0)
LIBNL_LIBS := $(shell pkg-config --libs libnl-route-3.0)
PRIV_CFLAGS := -I$(TOP)/user $(LIBNL_CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDLIBS   := -lxdp -lbpf -lelf -lz -ldeflate -lpcap $(LIBNL_LIBS) -lpthread

# libroxe: user/'s layers, each a folder, every arrow pointing down:
#   verbs/ (the API's control plane) > transport/ (engines, QP state
#   machines) > core/ (objects) > port/ (ports, XDP) > wire/ (codec).
LIB_LAYERS := verbs transport core port wire
LIB_SRCS := $(foreach l,$(LIB_LAYERS),$(wildcard user/$(l)/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(OBJ_PIC)/%.o)
LIB_SAN_OBJS := $(LIB_SRCS:%.c=$(OBJ_SAN)/%.o)
LIBROXE  := $(BUILD)/lib/libroxe.a
LIBROXE_SAN := $(BUILD)/lib/libroxe-san.a
# The shared library exports the public API's functions at ROXE_0.1 and
# the building blocks roxe's tools call at ROXE_PRIVATE (user/libroxe.map);
# tools link it, so they can use nothing else.
LIBROXE_SO := $(BUILD)/lib/libroxe.so.0
ROXE_PC  := $(BUILD)/lib/pkgconfig/roxe.pc

# Tools: tools/NAME.c is the program build/bin/NAME; so is a directory
# tools/NAME/ with a main.c and its other files.
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_DIRS := $(patsubst tools/%/main.c,%,$(wildcard tools/*/main.c))
TOOL_DIR_SRCS := $(wildcard $(TOOL_DIRS:%=tools/%/*.c))
TOOLS    := $(TOOL_SRCS:tools/%.c=$(BIN)/%) $(TOOL_DIRS:%=$(BIN)/%)
# What the tools share: tools/lib/ -> build/lib/libroxe-tools.a, with the
# client side of roxed's status socket (daemon/ctlsock.c) for roxectl and
# roxe(7)'s environment variables read into libroxe's settings
# (daemon/env.c), as roxed reads them.
TOOL_LIB_SRCS := $(wildcard tools/lib/*.c) daemon/ctlsock.c daemon/env.c
TOOL_LIB := $(BUILD)/lib/libroxe-tools.a

# roxed: daemon/, on top of libroxe (which does not contain it).
DAEMON_SRCS := $(wildcard daemon/*.c)
DAEMONS  := $(BIN)/roxed

# The VM harness's LD_PRELOAD shim that gives stock verbs programs in the
# guest a linger (tools/vm/linger.c). Linked with libibverbs so that its
# own verbs calls bind to IBVERBS_1.1: an unversioned reference takes the
# 1.0 compat symbols, which read another struct ibv_qp.
VM_LINGER := $(BUILD)/lib/roxe-linger.so

# BPF: bpf/NAME.bpf.c -> build/bpf/NAME.bpf.o -> build/include/NAME.skel.h
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(BPF_SRCS:bpf/%.c=$(BUILD)/bpf/%.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(GEN_INC)/%.skel.h)
BPF_CFLAGS := -O2 -g -target bpf -Wall -Wextra -Werror \
	-I$(TOP)/include/uapi -I$(TOP)/include -I$(ARCH_INC) -MMD -MP

.PHONY: all deps deps-demo deps-bench deps-check kernels check check-unit demo bench soak kmod clean install uninstall deb
# Keep every intermediate (BPF objects, tool objects): make install after
# make must not rebuild, and it installs build/bpf/roxe_xdp.bpf.o.
.SECONDARY:
all: $(BPF_SKELS) $(LIBROXE) $(LIBROXE_SO) $(ROXE_PC) $(TOOLS) $(DAEMONS) $(VM_LINGER)

# Packages: deps installs all; deps-NAME what make NAME needs
# (tools/scripts/install-deps.sh --for NAME), so that make demo installs
# no QEMU, no MPI and no test tools.
deps:
	@$(TOP)/tools/scripts/install-deps.sh
deps-demo deps-bench deps-check:
	@$(TOP)/tools/scripts/install-deps.sh --for $(@:deps-%=%)

# --- BPF -------------------------------------------------------------------
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(GEN_INC)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# --- user space ------------------------------------------------------------
# User objects may include BPF skeletons: build those first.
# Per-object flags go in OBJ_CFLAGS, never ROXE_CFLAGS: the selftests
# pass ROXE_CFLAGS on the command line to the makes they start (roxed-san
# from kmod_hostile), where it would override a target's own additions.
$(OBJ)/%.o: %.c | $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(ROXE_CFLAGS) $(OBJ_CFLAGS) -c $< -o $@

$(OBJ_SAN)/%.o: %.c | $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) -O1 -g $(SAN_FLAGS) $(ROXE_CFLAGS) $(OBJ_CFLAGS) -c $< -o $@

$(OBJ_PIC)/%.o: %.c | $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC $(ROXE_CFLAGS) $(OBJ_CFLAGS) -c $< -o $@

$(OBJ)/user/%.o $(OBJ_SAN)/user/%.o $(OBJ_PIC)/user/%.o $(OBJ)/daemon/%.o $(OBJ_SAN)/daemon/%.o: \
	OBJ_CFLAGS += $(PRIV_CFLAGS)

$(LIBROXE): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBROXE_SAN): $(LIB_SAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBROXE_SO): $(LIB_PIC_OBJS) user/libroxe.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(notdir $@) -Wl,--version-script=user/libroxe.map \
		-Wl,-Bsymbolic-functions -Wl,--no-undefined -o $@ $(LIB_PIC_OBJS) $(LDLIBS)
	ln -sfn $(notdir $@) $(BUILD)/lib/libroxe.so

# An uninstalled pkg-config file: PKG_CONFIG_PATH=build/lib/pkgconfig.
$(ROXE_PC): user/roxe.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(TOP)|; s|@LIBDIR@|$(BUILD)/lib|; s|@INCLUDEDIR@|$(TOP)/include|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

$(TOOL_LIB): $(TOOL_LIB_SRCS:%.c=$(OBJ)/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(OBJ)/tools/%.o: OBJ_CFLAGS += -I$(TOP)/tools/lib
# The programs' --version (include/private/roxe/version.h): the one object
# built with VERSION, again when the Makefile changes; roxed links it too.
VERSION_OBJ := $(OBJ)/tools/lib/version.o
$(VERSION_OBJ) $(OBJ_SAN)/tools/lib/version.o: OBJ_CFLAGS += -DROXE_VERSION='"$(VERSION)"'
$(VERSION_OBJ) $(OBJ_SAN)/tools/lib/version.o: Makefile
# the AF_XDP socket dump (sock_diag) goes through libnl
$(OBJ)/tools/lib/xskdiag.o: OBJ_CFLAGS += $(LIBNL_CFLAGS)

# Tools link the shared libroxe (ROXE_0.1 and ROXE_PRIVATE), found beside them;
# make install links them again with the installed library's RUNPATH.
TOOL_RPATH ?= $$ORIGIN/../lib
TOOL_LDLIBS = $(TOOL_LIB) -L$(BUILD)/lib -l:libroxe.so.0 \
	$(if $(TOOL_RPATH),-Wl$(comma)-rpath$(comma)'$(TOOL_RPATH)') $(LDLIBS)
comma := ,

$(BIN)/%: $(OBJ)/tools/%.o $(TOOL_LIB) $(LIBROXE_SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TOOL_LDLIBS)

$(VM_LINGER): tools/vm/linger.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -shared -fPIC -o $@ $< -libverbs

define tool_dir
$(BIN)/$(1): $(patsubst %.c,$(OBJ)/%.o,$(filter tools/$(1)/%,$(TOOL_DIR_SRCS))) $(TOOL_LIB) $(LIBROXE_SO)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(TOOL_LDLIBS) -lm
endef
$(foreach t,$(TOOL_DIRS),$(eval $(call tool_dir,$(t))))

# The command-line convention (include/private/roxe/cli.h): the tools get
# it from libroxe-tools.a, roxed links it as it links version.o.
CLI_OBJ := $(OBJ)/tools/lib/cli.o

$(BIN)/roxed: $(DAEMON_SRCS:%.c=$(OBJ)/%.o) $(VERSION_OBJ) $(CLI_OBJ) $(LIBROXE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBROXE) $(LDLIBS)

# roxed with ASan and UBSan, for the VM suite's hostile-application test
# (selftests/vm/kmod_hostile.sh builds it); not part of all, and not in
# build/bin (the installed programs, each with its man page).
ROXED_SAN := $(BUILD)/san/roxed-san
.PHONY: roxed-san
roxed-san: $(ROXED_SAN)
$(ROXED_SAN): $(DAEMON_SRCS:%.c=$(OBJ_SAN)/%.o) $(OBJ_SAN)/tools/lib/version.o \
		$(OBJ_SAN)/tools/lib/cli.o $(LIBROXE_SAN)
	@mkdir -p $(@D)
	$(CC) -O1 -g $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(LIBROXE_SAN) $(LDLIBS)

-include $(LIB_OBJS:.o=.d) $(LIB_SAN_OBJS:.o=.d) $(LIB_PIC_OBJS:.o=.d) $(BPF_OBJS:.o=.d) \
	$(TOOL_SRCS:tools/%.c=$(OBJ)/tools/%.d) $(TOOL_DIR_SRCS:%.c=$(OBJ)/%.d) \
	$(TOOL_LIB_SRCS:%.c=$(OBJ)/%.d) \
	$(DAEMON_SRCS:%.c=$(OBJ)/%.d) $(DAEMON_SRCS:%.c=$(OBJ_SAN)/%.d) $(OBJ_SAN)/tools/lib/version.d \
	$(OBJ_SAN)/tools/lib/cli.d

# --- kselftests ------------------------------------------------------------
# The harness (kselftest.h, kselftest_harness.h, lib.mk, runner.sh) comes
# from Debian's linux-source-6.1 tarball, extracted once into build/.
include selftests/selftests.mk

# The guest kernels, then roxe.ko for them first: a module that does not
# build fails check here, and no VM test can pass or skip without it.
check: deps-check
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory kernels
	@$(MAKE) --no-print-directory kmod
	@$(MAKE) --no-print-directory kselftest

# The VM suite alone (kernel rxe under QEMU), and its guest as a shell.
.PHONY: check-vm vm-shell
check-vm: deps-check
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory kernels
	@$(MAKE) --no-print-directory kmod
	@$(MAKE) --no-print-directory kselftest TARGETS=vm

vm-shell: deps-check all
	@$(TOP)/tools/vm/run.sh --shell

# --- demo, bench, soak ------------------------------------------------------
# tools/scripts/NAME.sh: the demo, the benchmarks, the 10-minute soak
# (manual).
demo: deps-demo
bench soak: deps-bench
demo bench soak:
	@$(MAKE) --no-print-directory all
	@if [ ! -x $(TOP)/tools/scripts/$@.sh ]; then \
		echo "$@: tools/scripts/$@.sh is not written yet" >&2; exit 1; fi
	@$(TOP)/tools/scripts/$@.sh

# bench-vm: roxe0 beside rxe on veth (6.1), then bench-vm-zc: copy mode
# against zero-copy, and roxe against rxe, on virtio-net and igb
# (trixie-bpo); each reports its own goals, either failing fails it
.PHONY: bench-vm bench-vm-zc
bench-vm bench-vm-zc: deps-check
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory kmod
	@rc=0; if [ $@ = bench-vm ]; then $(TOP)/tools/scripts/bench-vm.sh || rc=1; fi; \
		$(TOP)/tools/scripts/bench-vm-zc.sh || rc=1; exit $$rc

# --- kernel module ---------------------------------------------------------
# Built in build/kmod/, which holds links to kmod/'s sources: Kbuild writes
# its products next to the sources it compiles. Two kinds of build:
#  - the host's: against KDIR, by default the running kernel's headers when
#    they are installed, into build/kmod/ (and build/kmod-test/);
#  - the VM guests': for each series in VM_KERNELS, the newest Debian
#    kernel of it fetched into build/vm/kernels/ (make kernels;
#    tools/vm/kver.sh) against its own headers there, into
#    build/kmod/<release>/ (and build/kmod-test/<release>/), where the VM
#    tests take the module for the kernel they boot.
# Version differences live in kmod/compat.h.
HOST_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(if $(wildcard $(HOST_KDIR)/Makefile),$(HOST_KDIR))
VM_KERNELS ?= 6.1 6.12 trixie-bpo
# the guest kernels' tree (tools/vm/fetch-kernels.sh), and the releases
# VM_KERNELS stand for in it (none before make kernels)
VM_KROOT := $(shell $(TOP)/tools/vm/kver.sh --root)
VM_KVERS := $(foreach n,$(VM_KERNELS),$(shell $(TOP)/tools/vm/kver.sh $(n) 2>/dev/null))
KMOD_OUT := $(BUILD)/kmod
KMOD_SRCS := kmod/Kbuild $(wildcard kmod/*.c kmod/*.h)
# the VM suite's kernel ULP (selftests/vm/kverbs/), built the same way
KTEST_OUT := $(BUILD)/kmod-test
KTEST_SRCS := $(wildcard selftests/vm/kverbs/Kbuild selftests/vm/kverbs/*.[ch])

# kmod_build KDIR SUBDIR [MAKE ARGS] [MAKE]: roxe.ko and the test ULPs against
# KDIR into build/kmod/SUBDIR and build/kmod-test/SUBDIR, with MAKE (a
# command that runs make; default $(MAKE)); any compiler or
# modpost warning fails the build (and removes the objects, so the next
# build compiles them again and fails again)
define kmod_build
	@mkdir -p $(KMOD_OUT)/$(2) $(KTEST_OUT)/$(2)
	@find $(KMOD_OUT)/$(2) $(KTEST_OUT)/$(2) -maxdepth 1 -xtype l -delete
	@for f in $(KMOD_SRCS); do ln -sfn $(TOP)/$$f $(KMOD_OUT)/$(2)/; done
	@for f in $(KTEST_SRCS); do ln -sfn $(TOP)/$$f $(KTEST_OUT)/$(2)/; done
	+@for d in $(KMOD_OUT)/$(2) $(KTEST_OUT)/$(2); do \
		$(or $(4),$(MAKE)) -C $(1) M=$$d ROXE_VERSION=$(VERSION) $(3) modules >$$d/build.log 2>&1; rc=$$?; \
		cat $$d/build.log; [ $$rc = 0 ] || exit 1; \
		if grep -v '^make' $$d/build.log | grep -qi 'warning'; then \
			rm -f $$d/*.o $$d/*.ko; \
			echo "kmod: warnings building against $(1)" >&2; exit 1; fi; \
	done
endef

.PHONY: kmod-clean kmod-host kmod-vm kmod-vm-all
kmod: kmod-host kmod-vm
	@if [ -z "$(KDIR)" ] && [ -z "$(strip $(VM_KERNELS))" ]; then \
		echo "kmod: no kernel headers: neither the running kernel's" \
		     "($(HOST_KDIR)) nor a VM guest kernel (VM_KERNELS is empty);" \
		     "give KDIR= or VM_KERNELS=" >&2; \
		exit 1; fi

# The guest kernels, fetched when missing: tools/vm/fetch-kernels.sh says
# what it downloads and why it cannot.
kernels:
	@[ -z "$(strip $(VM_KERNELS))" ] || $(TOP)/tools/vm/fetch-kernels.sh $(VM_KERNELS)

kmod-host:
ifneq ($(KDIR),)
	@if [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "kmod: KDIR=$(KDIR) holds no kernel build tree" >&2; exit 1; fi
	$(call kmod_build,$(KDIR),.)
endif

# After make kernels, a make of its own: VM_KVERS, read when this one
# started, may predate the fetch.
kmod-vm: kernels
	+@[ -z "$(strip $(VM_KERNELS))" ] || $(MAKE) --no-print-directory kmod-vm-all

kmod-vm-all:
	@for n in $(VM_KERNELS); do $(TOP)/tools/vm/kver.sh $$n >/dev/null || exit 1; done

# one target per guest kernel, against its headers in build/vm/kernels/,
# without the modules' BTF: 6.12's headers ship a vmlinux, and with it
# Kbuild runs pahole (dwarves), which the guests' tests do not need
KMOD_VM_ARGS := CONFIG_DEBUG_INFO_BTF_MODULES=
define kmod_vm_rule
kmod-vm-all: kmod-vm-$(1)
.PHONY: kmod-vm-$(1)
kmod-vm-$(1):
	@if [ ! -f $(VM_KROOT)/usr/src/linux-headers-$(1)/Makefile ]; then \
		echo "kmod: headers for the VM kernel $(1) are missing" \
		     "from $(VM_KROOT): run make kernels" >&2; \
		exit 1; fi
	$$(call kmod_build,$(VM_KROOT)/usr/src/linux-headers-$(1),$(1),$(KMOD_VM_ARGS))
endef
# trixie's kernels (+deb13) come without headers Debian 12 can use (their
# kbuild wants gcc-14 and trixie's libc): built in a trixie chroot holding
# those headers (tools/vm/kbuild-chroot.sh; made once, shared by the trees
# that share build/vm/kernels/)
KCHROOT := $(TOP)/tools/vm/kbuild-chroot.sh
define kmod_vm_chroot_rule
kmod-vm-all: kmod-vm-$(1)
.PHONY: kmod-vm-$(1)
kmod-vm-$(1):
	@$(KCHROOT) setup $(1)
	$$(call kmod_build,/usr/src/linux-headers-$(1),$(1),$(KMOD_VM_ARGS),$(KCHROOT) run $(1) make)
endef
$(foreach k,$(filter-out %+deb13-amd64,$(VM_KVERS)),$(eval $(call kmod_vm_rule,$(k))))
$(foreach k,$(filter %+deb13-amd64,$(VM_KVERS)),$(eval $(call kmod_vm_chroot_rule,$(k))))

kmod-clean:
	rm -rf $(KMOD_OUT) $(KTEST_OUT)

# --- install ----------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]: the programs (those whose
# manual is in section 8 in SBINDIR, the others in BINDIR), libroxe (the
# versioned shared library, its links and the static archive), roxe.pc,
# the public headers, the manual pages, the XDP object, the systemd units
# roxed@.service and roxe.service, and roxe.ko's sources with a dkms.conf
# in DKMSDIR/roxe-VERSION. make uninstall removes exactly those. No
# modules-load.d entry: the units load roxe.ko (modprobe@roxe.service)
# when they start, and a host that runs neither needs no module.
PREFIX      ?= /usr/local
EXEC_PREFIX ?= $(PREFIX)
BINDIR      ?= $(EXEC_PREFIX)/bin
SBINDIR     ?= $(EXEC_PREFIX)/sbin
LIBDIR      ?= $(EXEC_PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATAROOTDIR ?= $(PREFIX)/share
MANDIR      ?= $(DATAROOTDIR)/man
DOCDIR      ?= $(DATAROOTDIR)/doc/roxe
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# The XDP object, for inspection and other loaders: libroxe carries its own
# copy (the skeleton, build/include/roxe_xdp.skel.h), so nothing reads it.
BPFDIR      ?= $(LIBDIR)/bpf
# systemd reads its directory under /usr/local/lib too.
UNITDIR     ?= $(PREFIX)/lib/systemd/system
# make uninstall only: the boot-time load of roxe.ko that make install
# once put there (see above)
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
# dkms finds module sources only in /usr/src, whatever the prefix.
DKMSDIR     ?= /usr/src
INSTALL     ?= install

# The public headers: all of include/roxe/ (the API, verbs.h, and the
# header-only contracts); include/uapi/ and include/private/ are roxe's own.
PUB_HEADERS := $(notdir $(wildcard include/roxe/*.h))
# roxe.ko's sources for dkms: kmod/ and the shared headers it includes, in
# the tree's layout so that kmod/Kbuild finds ../include/uapi, ../include;
# its Kbuild sets ROXE_VERSION (MODULE_VERSION), which make kmod passes.
DKMS_SRC    := $(DKMSDIR)/roxe-$(VERSION)
DKMS_KMOD   := Kbuild $(notdir $(wildcard kmod/*.c kmod/*.h))
DKMS_UAPI   := kabi.h
DKMS_INC    := limits.h
INST_PROGS  := $(notdir $(TOOLS) $(DAEMONS))
INST_SBIN   := $(foreach p,$(INST_PROGS),$(if $(wildcard man/$(p).8),$(p)))
INST_BIN    := $(filter-out $(INST_SBIN),$(INST_PROGS))
MAN_PAGES   := $(notdir $(wildcard man/*.[1-8]))
# The installed tools find libroxe in LIBDIR: a RUNPATH unless the dynamic
# linker searches it anyway (Debian's policy: no RUNPATH to a system dir).
MULTIARCH   := $(shell $(CC) -print-multiarch 2>/dev/null)
SYS_LIBDIRS := /lib /usr/lib $(if $(MULTIARCH),/lib/$(MULTIARCH) /usr/lib/$(MULTIARCH))
INST_RPATH  := $(if $(filter $(SYS_LIBDIRS),$(LIBDIR)),,$(LIBDIR))
INST_BUILD  := $(BUILD)/install
# The units' one sandbox (what roxed needs, and no more) in place of their
# @SANDBOX@ line: roxed@.service and roxe.service run the same program.
UNIT = sed -e '/^@SANDBOX@$$/{r tools/systemd/sandbox.conf.in' -e 'd;}'
SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g; s|@LIBDIR@|$(LIBDIR)|g; s|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@SBINDIR@|$(SBINDIR)|g; s|@VERSION@|$(VERSION)|g'

.PHONY: install-build
# The programs linked again for LIBDIR, the .pc file and the unit for PREFIX.
install-build: all
	rm -rf $(INST_BUILD)
	@mkdir -p $(INST_BUILD)
	$(MAKE) --no-print-directory BIN=$(INST_BUILD)/bin TOOL_RPATH='$(INST_RPATH)' \
		$(addprefix $(INST_BUILD)/bin/,$(INST_PROGS))
	$(SUBST) user/roxe.pc.in > $(INST_BUILD)/roxe.pc
	$(UNIT) tools/systemd/roxed@.service.in | $(SUBST) > $(INST_BUILD)/roxed@.service
	$(UNIT) tools/systemd/roxe.service.in | $(SUBST) > $(INST_BUILD)/roxe.service
	$(SUBST) kmod/dkms.conf.in > $(INST_BUILD)/dkms.conf
	@# kmod/Kbuild with its version (MODULE_VERSION), which make kmod gives
	sed 's|^ROXE_VERSION ?=.*|ROXE_VERSION ?= $(VERSION)|' kmod/Kbuild > $(INST_BUILD)/Kbuild
	@grep -qx 'ROXE_VERSION ?= $(VERSION)' $(INST_BUILD)/Kbuild || \
		{ echo "install: kmod/Kbuild has no line ROXE_VERSION ?=" >&2; exit 1; }

install: install-build
	$(INSTALL) -d -m 755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR)
	$(INSTALL) -m 755 $(addprefix $(INST_BUILD)/bin/,$(INST_BIN)) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(addprefix $(INST_BUILD)/bin/,$(INST_SBIN)) $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -D -m 644 $(LIBROXE_SO) $(DESTDIR)$(LIBDIR)/libroxe.so.$(VERSION)
	ln -sfn libroxe.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libroxe.so.0
	ln -sfn libroxe.so.0 $(DESTDIR)$(LIBDIR)/libroxe.so
	$(INSTALL) -D -m 644 $(LIBROXE) $(DESTDIR)$(LIBDIR)/libroxe.a
	$(INSTALL) -D -m 644 $(INST_BUILD)/roxe.pc $(DESTDIR)$(PKGCONFIGDIR)/roxe.pc
	$(INSTALL) -d -m 755 $(DESTDIR)$(INCLUDEDIR)/roxe
	$(INSTALL) -m 644 $(addprefix include/roxe/,$(PUB_HEADERS)) $(DESTDIR)$(INCLUDEDIR)/roxe/
	@set -e; for m in $(MAN_PAGES); do \
		echo "$(INSTALL) -D -m 644 man/$$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m"; \
		$(INSTALL) -D -m 644 man/$$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	$(INSTALL) -D -m 644 $(BUILD)/bpf/roxe_xdp.bpf.o $(DESTDIR)$(BPFDIR)/roxe_xdp.bpf.o
	$(INSTALL) -D -m 644 $(INST_BUILD)/roxed@.service $(DESTDIR)$(UNITDIR)/roxed@.service
	$(INSTALL) -D -m 644 $(INST_BUILD)/roxe.service $(DESTDIR)$(UNITDIR)/roxe.service
	$(INSTALL) -D -m 644 $(INST_BUILD)/dkms.conf $(DESTDIR)$(DKMS_SRC)/dkms.conf
	$(INSTALL) -d -m 755 $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/include/roxe \
		$(DESTDIR)$(DKMS_SRC)/include/uapi/roxe
	$(INSTALL) -m 644 $(addprefix kmod/,$(filter-out Kbuild,$(DKMS_KMOD))) $(INST_BUILD)/Kbuild \
		$(DESTDIR)$(DKMS_SRC)/kmod/
	$(INSTALL) -m 644 $(addprefix include/uapi/roxe/,$(DKMS_UAPI)) $(DESTDIR)$(DKMS_SRC)/include/uapi/roxe/
	$(INSTALL) -m 644 $(addprefix include/roxe/,$(DKMS_INC)) $(DESTDIR)$(DKMS_SRC)/include/roxe/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then echo ldconfig; ldconfig; fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INST_BIN))
	rm -f $(addprefix $(DESTDIR)$(SBINDIR)/,$(INST_SBIN))
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libroxe.so.$(VERSION) libroxe.so.0 libroxe.so libroxe.a)
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/roxe.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/roxe/,$(PUB_HEADERS))
	rmdir $(DESTDIR)$(INCLUDEDIR)/roxe 2>/dev/null || true
	@for m in $(MAN_PAGES); do \
		echo "rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m"; \
		rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	rm -f $(DESTDIR)$(BPFDIR)/roxe_xdp.bpf.o
	rm -f $(DESTDIR)$(UNITDIR)/roxed@.service $(DESTDIR)$(UNITDIR)/roxe.service
	rm -f $(DESTDIR)$(MODULESLOADDIR)/roxe.conf
	rm -f $(DESTDIR)$(DKMS_SRC)/dkms.conf $(addprefix $(DESTDIR)$(DKMS_SRC)/kmod/,$(DKMS_KMOD)) \
		$(addprefix $(DESTDIR)$(DKMS_SRC)/include/uapi/roxe/,$(DKMS_UAPI)) \
		$(addprefix $(DESTDIR)$(DKMS_SRC)/include/roxe/,$(DKMS_INC))
	rmdir $(DESTDIR)$(DKMS_SRC)/include/uapi/roxe $(DESTDIR)$(DKMS_SRC)/include/uapi \
		$(DESTDIR)$(DKMS_SRC)/include/roxe $(DESTDIR)$(DKMS_SRC)/include \
		$(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC) 2>/dev/null || true

# --- Debian packages ----------------------------------------------------------
# roxe, libroxe0, libroxe-dev, roxe-dkms into build/deb/, built by
# dpkg-buildpackage from a copy of the tree (tools/scripts/deb.sh says why);
# debian/changelog's version must be VERSION.
deb:
	@$(TOP)/tools/scripts/deb.sh $(VERSION)

clean:
	rm -rf $(BUILD)
