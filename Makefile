# vptune build. Every module folder's *.c goes into one static library; each
# tools/*.c is a program in bin/; tests/**/test_*.c form one test runner.
# Adding a file never needs an edit here.

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= gcc
CXX       ?= g++
SCENE     ?= manix

ifeq ($(SANITIZE),1)
  BUILD   := build-asan
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  OPT     := -O1
  BIN     := build-asan/bin
else
  BUILD   := build
  SANFLAGS :=
  OPT     := -O2
  BIN     := bin
endif

# scenes/ is the scene core; its formats, phantoms and Mitsuba reader are
# folders of their own, each a module here.
MODULES := base physics scenes scenes/formats scenes/phantoms scenes/mitsuba image reference codegen harness tuner \
           experiments cli
CPPFLAGS += -D_GNU_SOURCE -I. -I$(BUILD)/gen -I$(CUDA_HOME)/include \
            -DVPT_CUDA_HOME='"$(CUDA_HOME)"'
# -ffp-contract=off: the CPU reference evaluates the shared physics header
# without fused multiply-adds, as the GPU kernels do (compiled with --fmad=false).
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Werror -MMD -MP -pthread \
            -ffp-contract=off $(SANFLAGS)
LDFLAGS  += -pthread $(SANFLAGS) -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
# libpng, jansson, expat, libcrypto, zlib, libstdc++ and libgcc are linked statically: the
# binaries then need only glibc, NVRTC and (at run time, through dlopen) the
# CUDA driver, so the ones built here also run on a GPU machine that has no
# -dev packages.
LDLIBS   += -static-libgcc -Wl,-Bstatic -lpng16 -ljansson -lexpat -lcrypto -lz -lstdc++ -Wl,-Bdynamic -lnvrtc -ldl -lm

LIB_SRCS  := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
# NanoVDB's checksum code is C++ (header-only, libnanovdb-dev): the one C++
# file of the library (scenes/formats/volume_nanovdb_checksum.h says why).
LIB_CXX_SRCS := scenes/formats/volume_nanovdb_checksum.cc
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_CXX_SRCS:%.cc=$(BUILD)/obj/%.o) \
             $(BUILD)/obj/gen/embedded.o $(BUILD)/obj/gen/version.o
LIB       := $(BUILD)/libvptune.a
TOOL_SRCS := $(wildcard tools/*.c)
TOOLS     := $(TOOL_SRCS:tools/%.c=$(BIN)/%)
TEST_SRCS := $(wildcard tests/harness/*.c) $(wildcard tests/test_*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BIN  := $(BIN)/vptune-tests
EMBEDDED  := kernels.cu.in physics/vpt_physics.h physics/vpt_medium.h physics/vpt_tracer.h physics/vpt_sparse.h \
             codegen/kernel_abi.h
# PNanoVDB.h (libnanovdb-dev, installed by the package check) is embedded
# too: volume=sparse kernels include it, and the GPU machines lack the package.
PNANOVDB_H := /usr/include/nanovdb/PNanoVDB.h

# The DICOM reader's GDCM shim: a shared library loaded on first use
# (scenes/formats/volume_dicom.c says why), so the programs do not need GDCM to run.
DICOM_SHIM := $(BIN)/libvptune-dicom.so
# Looked up when the shim is compiled, not when make reads this file: on a
# fresh machine GDCM's headers are installed by the package check, which
# runs after parsing (an empty -I then swallowed the next flag).
GDCM_INC    = $$(ls -d /usr/include/gdcm-* 2>/dev/null | head -n 1)
GDCM_LIBS  := -lgdcmMSFF -lgdcmDSED -lgdcmCommon

# The OpenVDB reader's shim, the same way (scenes/formats/volume_vdb.c): OpenVDB
# reads the .vdb file, NanoVDB converts it. Debian's libopenvdb-dev headers
# include Boost's without depending on libboost-dev (scripts/deps.sh lists it).
OPENVDB_SHIM := $(BIN)/libvptune-openvdb.so
OPENVDB_LIBS := -lopenvdb -ltbb -lImath -lz

# OpenEXR environment maps, the same way (scenes/env_map.c): OpenEXR's C API
# (OpenEXRCore) reads the .exr file, in a plugin of its own.
OPENEXR_SHIM := $(BIN)/libvptune-openexr.so
OPENEXR_LIBS := -lOpenEXRCore

# MPI is optional (tuner/mpi.h): its shim, bin/libvptune-mpi.so, is what
# `tune` loads when mpirun or srun starts it; the programs themselves never
# link libmpi. make MPI=1 builds the shim (and scripts/deps.sh installs
# Debian's OpenMPI first), MPI=0 never; unset, it is built when mpicc is
# found. Without it, a tune started by an MPI launcher says how to get it.
MPICC ?= mpicc
ifeq ($(origin MPI),undefined)
  MPI := $(if $(shell command -v $(MPICC) 2>/dev/null),1,0)
  MPI_DEPS :=
else
  MPI_DEPS := $(if $(filter 1,$(MPI)),$(BUILD)/deps-mpi.ok)
endif
MPI_SHIM := $(if $(filter 1,$(MPI)),$(BIN)/libvptune-mpi.so)
SHIMS    := $(DICOM_SHIM) $(OPENVDB_SHIM) $(OPENEXR_SHIM) $(MPI_SHIM)

.PHONY: all test install clean tune bench experiments report check-sanitize deps
all: $(TOOLS) $(TEST_BIN) $(SHIMS)

# System packages before anything is compiled (scripts/deps.sh): the missing
# -dev packages are installed when running as root or with passwordless sudo,
# else make stops with the apt-get line to run. The stamp records a pass.
DEPS_STAMP := $(BUILD)/deps.ok
$(DEPS_STAMP): scripts/deps.sh
	@sh scripts/deps.sh
	@mkdir -p $(@D) && touch $@
deps:
	sh scripts/deps.sh
$(BUILD)/deps-mpi.ok: scripts/deps.sh
	@VPT_DEPS_MPI=1 sh scripts/deps.sh
	@mkdir -p $(@D) && touch $@

$(BUILD)/gen/embedded.c: $(EMBEDDED) scripts/embed.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	sh scripts/embed.sh $@.tmp $(EMBEDDED) nanovdb/PNanoVDB.h=$(PNANOVDB_H) && mv $@.tmp $@

# The commit the programs report in their results' provenance.
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(@D)
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	 git diff --quiet HEAD -- 2>/dev/null || c="$$c-dirty"; \
	 printf 'const char vpt_git_commit[] = "%s";\n' "$$c" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

.PHONY: FORCE
FORCE:

$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/scenes/formats/volume_nanovdb_checksum.o: scenes/formats/volume_nanovdb_checksum.cc scenes/formats/volume_nanovdb_checksum.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(OPT) -g -Wall -Wextra -Werror -pthread -fPIC $(SANFLAGS) -I. -c $< -o $@

# Not instrumented under SANITIZE=1: GDCM itself is not, and the shim only
# hands plain arrays back.
$(BUILD)/obj/scenes/formats/volume_dicom_gdcm.o: scenes/formats/volume_dicom_gdcm.cc scenes/formats/volume_dicom_shim.h \
                                                 | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@inc=$(GDCM_INC); [ -n "$$inc" ] || { echo "make: GDCM's headers (/usr/include/gdcm-*) are missing: apt-get install libgdcm-dev" >&2; exit 1; }; \
	 echo "$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -fPIC -I. -I$$inc -c $< -o $@"; \
	 $(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -fPIC -I. -I$$inc -c $< -o $@

$(DICOM_SHIM): $(BUILD)/obj/scenes/formats/volume_dicom_gdcm.o
	@mkdir -p $(@D)
	$(CXX) -shared -Wl,--no-undefined $< $(GDCM_LIBS) -o $@

# Not instrumented under SANITIZE=1 either: OpenVDB and TBB are not.
$(BUILD)/obj/scenes/formats/volume_vdb_openvdb.o: scenes/formats/volume_vdb_openvdb.cc scenes/formats/volume_vdb_shim.h \
                                                  | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -fPIC -I. -c $< -o $@

$(OPENVDB_SHIM): $(BUILD)/obj/scenes/formats/volume_vdb_openvdb.o
	@mkdir -p $(@D)
	$(CXX) -shared -Wl,--no-undefined $< $(OPENVDB_LIBS) -o $@

# Not instrumented under SANITIZE=1 either: OpenEXR is not.
$(BUILD)/obj/scenes/env_map_openexr.o: scenes/env_map_openexr.cc scenes/env_map_exr_shim.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -fPIC -I. -c $< -o $@

$(OPENEXR_SHIM): $(BUILD)/obj/scenes/env_map_openexr.o
	@mkdir -p $(@D)
	$(CXX) -shared -Wl,--no-undefined $< $(OPENEXR_LIBS) -o $@

# Not instrumented under SANITIZE=1 either: OpenMPI is not.
$(MPI_SHIM): mpi/shim.c tuner/mpi_shim.h | $(DEPS_STAMP) $(MPI_DEPS)
	@mkdir -p $(@D)
	$(MPICC) -shared -fPIC -O2 -g -Wall -Wextra -Werror -I. $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/%: $(BUILD)/obj/tools/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(TEST_BIN): $(TEST_OBJS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The one test command: unit, CPU reference, NVRTC and GPU tests (the latter
# skip with a reason when no GPU is present). Ends with "N passed, N failed".
test: $(TEST_BIN) $(TOOLS) $(SHIMS)
	./$(TEST_BIN) $(TESTS)

tune: $(TOOLS)
	./$(BIN)/tune --scene $(SCENE)

bench: $(TOOLS)
	./$(BIN)/bench --thesis

# The programs, the DICOM, OpenVDB, OpenEXR and MPI shims where they look for them
# (../lib/vptune), and bash completion where bash-completion loads it on demand.
install: $(TOOLS) $(SHIMS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/vptune \
	           $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(SHIMS) $(DESTDIR)$(PREFIX)/lib/vptune/
	for t in render bench tune; do \
	  install -m 644 scripts/vptune-completion.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t; done

clean:
	rm -rf build build-asan bin

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(TOOL_SRCS:tools/%.c=$(BUILD)/obj/tools/%.d)

# Fuzzing (libFuzzer targets, bounded runs): see fuzz/fuzz.mk.
-include fuzz/fuzz.mk
# Experiments and the report: see experiments/experiments.mk and report/report.mk.
-include experiments/experiments.mk
-include report/report.mk
