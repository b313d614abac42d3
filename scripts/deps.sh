#!/bin/sh
# The build's system packages, checked before anything is compiled (the
# Makefile runs this first; `make deps` runs it alone).
#
# Contract: exits 0 when every package below is installed. When some are
# missing, it installs exactly those with apt-get if it can (running as root,
# or with passwordless sudo), saying so in one line; otherwise it prints one
# message naming the missing packages and the exact `apt-get install` line,
# and exits 1 so that make stops before compiling. VPT_DEPS_NO_INSTALL=1
# forbids installing (the message instead). Needs dpkg-query (Debian, Ubuntu).
#
# Why these: libpng, jansson, expat, zlib and OpenSSL's libcrypto are linked
# statically into the programs (so the binaries run on GPU machines that have
# no -dev packages and no package registry); GDCM reads DICOM series, through
# a shim library loaded only when a DICOM volume is asked for
# (scenes/formats/volume_dicom.c); g++ compiles that shim. libnanovdb-dev's PNanoVDB.h
# (a header only) is compiled into the programs and embedded into the kernel
# source (physics/vpt_sparse.h); libopenvdb-dev reads .vdb files, through a
# shim of its own like GDCM's (scenes/formats/volume_vdb.c); libboost-dev because
# libopenvdb-dev's headers include Boost's (boost/numeric/conversion) without
# Debian's package depending on it. libopenexr-dev reads .exr environment
# maps, through a plugin of its own (scenes/env_map.c). VPT_DEPS_MPI=1 (what `make MPI=1` sets)
# adds OpenMPI, for the MPI shim (tuner/mpi_shim.h) and mpirun: optional,
# since only a tune across processes needs it.
set -u
PACKAGES="libpng-dev libjansson-dev libexpat1-dev zlib1g-dev libssl-dev libgdcm-dev libnanovdb-dev libopenvdb-dev libboost-dev libopenexr-dev g++"
if [ "${VPT_DEPS_MPI:-0}" = 1 ]; then PACKAGES="$PACKAGES libopenmpi-dev openmpi-bin"; fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: no dpkg-query: not a Debian/Ubuntu system; make sure these (or your system's equivalents) are installed: $PACKAGES" >&2
    exit 0
fi
missing=""
for p in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    case "$status" in
        *" installed") ;;
        *) missing="$missing $p" ;;
    esac
done
missing=${missing# }
[ -z "$missing" ] && exit 0

line="apt-get install -y $missing"
sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then sudo="sudo"; fi
fi
if [ "${VPT_DEPS_NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1 &&
   { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
    echo "deps: installing the missing packages ($missing) with ${sudo:+sudo }apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if $sudo apt-get update -qq && $sudo apt-get install -y -qq $missing >/dev/null; then
        exit 0
    fi
    echo "deps: error: '${sudo:+sudo }$line' failed (see above); run it yourself, then make again" >&2
    exit 1
fi
echo "deps: error: the build needs packages that are not installed: $missing; install them with: sudo $line" >&2
exit 1
