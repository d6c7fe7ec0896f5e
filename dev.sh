#!/usr/bin/env bash
# plur_desk's entry points on a fresh Debian/Ubuntu machine (idempotent, never touches the system Python):
#   ./dev.sh run [STORE] [--demo] [--reviewer NAME]   install what the app needs, then launch it
#   ./dev.sh test [PYTEST ARGS]                        install what the tests need, then run them (all: 4 workers)
#   ./dev.sh lint                                      ruff check, ruff format --check and mypy
# Everything Python goes into a project virtual environment, .venv (ignored by git). It is created with the
# first `python3` on PATH (or $PYTHON) and reinstalled only when pyproject.toml or that interpreter changed.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"; shift || true

VENV=".venv"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { printf 'dev.sh: %s\n' "$*" >&2; }
# One line per step, so a first run never sits silent: "dev.sh [2/5] Python environment (.venv): ready".
STEP=0 STEPS=0
step() { STEP=$((STEP + 1)); printf 'dev.sh [%d/%d] %s\n' "$STEP" "$STEPS" "$*" >&2; }

# What Qt needs to show a window (offscreen and on X11/Wayland), plus fonts with the glyphs stored text uses.
RUN_LIBS="libegl1 libgl1 libfontconfig1 libglib2.0-0 libxkbcommon0 libdbus-1-3 libx11-6 libxcb-cursor0
 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1
 libxkbcommon-x11-0 fonts-dejavu-core fonts-noto-color-emoji"
# Only the tests need a virtual screen (screenshots), the AppStream validator and Node (the real PLUR as oracle).
TEST_LIBS="xvfb xauth appstream"

apt_install() {
  local why="$1"; shift
  command -v dpkg >/dev/null || { say "not a Debian system: make sure these are installed: $*"; return 0; }
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && { say "system packages ($why): already installed"; return 0; }
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "need root to install ${missing[*]} ($why); install them and run again"; exit 1; }
    sudo="sudo"
    say "installing ${missing[*]} with apt ($why); this uses sudo and may ask for your password"
  else
    say "installing ${missing[*]} with apt ($why)"
  fi
  export DEBIAN_FRONTEND=noninteractive
  local log; log="$(mktemp)"
  if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; say "apt could not install ${missing[*]}"; exit 1
  fi
  rm -f "$log"
}

python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

ensure_venv() {
  command -v "$PYTHON" >/dev/null || { apt_install "a Python interpreter" python3; }
  python_ok "$PYTHON" || { say "plur_desk needs Python 3.11 or newer; $PYTHON is $("$PYTHON" -V 2>&1)"; exit 1; }
  local base; base="$("$PYTHON" -c 'import sys; print(sys.base_prefix, sys.version.split()[0])')"
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.base" 2>/dev/null)" = "$base" ] && python_ok "$VENV/bin/python"; then
    say "Python environment $VENV: ready"
    return 0
  fi
  say "creating the Python environment $VENV with $("$PYTHON" -V 2>&1)"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
    # Debian and Ubuntu ship venv and ensurepip in a separate package, named after the interpreter's version.
    rm -rf "$VENV"
    local ver; ver="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install "to create the project's virtual environment" python3-venv "python${ver}-venv"
    "$PYTHON" -m venv "$VENV"
  fi
  echo "$base" >"$VENV/.base"
}

# pip install -e '.[extras]' into the venv, only when pyproject.toml, the extras or the interpreter changed.
ensure_installed() {
  local extras="$1" stamp="$VENV/.installed"
  local want; want="$(cat "$VENV/.base") [$extras] $(sha256sum pyproject.toml | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then say "plur_desk and its dependencies: up to date"; return 0; fi
  # A stamp for a superset of these extras is good enough (test includes everything run needs).
  if [ "$extras" = "embeddings" ] && grep -q "test,embeddings\] $(sha256sum pyproject.toml | cut -c1-16)" "$stamp" 2>/dev/null; then
    say "plur_desk and its dependencies: up to date"
    return 0
  fi
  say "installing plur_desk and its dependencies into $VENV ($extras); the first time takes a minute"
  # uv fetches the ~40 wheels in parallel (measured here on a fresh machine: 36 s against pip's 72 s, pip's downloads
  # are one at a time); where uv cannot be had, pip does the same install. PYTHONWARNINGS reaches the build backend:
  # its notice about editable installs is for library authors, not users.
  if "$VENV/bin/python" -m pip install -q uv >/dev/null 2>&1 && "$VENV/bin/python" -m uv --version >/dev/null 2>&1; then
    # Byte-compiled at install, as pip does by default: uv does not, and where PYTHONDONTWRITEBYTECODE is set (as
    # here) every process compiles numpy, PySide6, onnxruntime … from source again: 1.4 s of CPU for a process that
    # imports the window, the index and the model, against 0.65 s byte-compiled.
    PYTHONWARNINGS=ignore "$VENV/bin/python" -m uv pip install -q --compile-bytecode --python "$VENV/bin/python" -e ".[$extras]"
  else
    "$VENV/bin/python" -m pip install -q --upgrade pip
    PYTHONWARNINGS=ignore "$VENV/bin/python" -m pip install -q -e ".[$extras]"
  fi
  echo "$want" >"$stamp"
}

# plur_desk is installed editable, so it runs from this checkout: its modules are byte-compiled here (a no-op when
# up to date), or every launch compiles them again where PYTHONDONTWRITEBYTECODE is set (0.15-0.2 s of CPU).
compile_sources() { "$VENV/bin/python" -m compileall -q -j 0 "$@" >/dev/null || say "byte-compiling $* failed; running from source"; }

# pytest rewrites the asserts of each test module it imports and caches the result only where bytecode may be
# written: where PYTHONDONTWRITEBYTECODE is set (as on this machine kind) each of the suite's workers rewrote all
# ~170 modules again as it collected (6.4 s of CPU per worker; 1.9 s from the cache). One collection writes that
# cache beforehand; what it finds wrong is reported by the run itself.
cache_test_modules() { env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" -m pytest -q --collect-only -p no:cacheprovider >/dev/null 2>&1 || true; }

# The int8-compute variant of the installed embedding model (no network; a no-op when up to date).
ensure_embed_model() { "$VENV/bin/python" packaging/build_embed_model.py || say "embedding model not derived; the slower one is used"; }

# npm's install runs beside the Python one (both mostly wait on the network); wait_node_modules joins it.
NODE_PID=""
NODE_LOG=""
start_node_modules() {
  command -v node >/dev/null && command -v npm >/dev/null || apt_install "Node runs the real PLUR used as the tests' oracle" nodejs npm
  local want; want="$(sha256sum tests/node/package-lock.json | cut -c1-16)"
  if [ "$(cat tests/node/node_modules/.stamp 2>/dev/null)" != "$want" ]; then
    say "installing the real PLUR (npm) for the interop tests, beside the Python install"
    NODE_LOG="$(mktemp)"
    # Without PLUR's optional packages: the tests drive PLUR on its YAML tier, and the optional better-sqlite3 alone
    # was compiled from source on a machine without a prebuilt binary (over a minute of CPU). The benchmarks that time
    # PLUR's own SQLite index install it with `npm ci` in tests/node (docs/benchmarks.md).
    (cd tests/node && npm ci --omit=optional --no-audit --no-fund --loglevel=error && echo "$want" >node_modules/.stamp) >"$NODE_LOG" 2>&1 &
    NODE_PID=$!
  else
    say "the real PLUR (npm): up to date"
  fi
}
wait_node_modules() {
  [ -n "$NODE_PID" ] || return 0
  if ! wait "$NODE_PID"; then cat "$NODE_LOG" >&2; rm -f "$NODE_LOG"; say "npm could not install the real PLUR"; exit 1; fi
  rm -f "$NODE_LOG"
  say "the real PLUR (npm): installed"
}

case "$mode" in
  run)
    STEPS=5
    step "system libraries for Qt"; apt_install "Qt's system libraries" $RUN_LIBS
    step "Python environment"; ensure_venv
    step "plur_desk and its dependencies"; ensure_installed "embeddings"
    step "embedding model"; ensure_embed_model; compile_sources plur_desk
    step "starting plur-desk"
    exec "$VENV/bin/python" -m plur_desk "$@"
    ;;
  test)
    STEPS=6
    step "system libraries for Qt and the tests"; apt_install "Qt's system libraries and the test tools" $RUN_LIBS $TEST_LIBS
    step "the real PLUR (Node) for the interop tests"; start_node_modules
    step "Python environment"; ensure_venv
    step "plur_desk, its dependencies and the test tools"; ensure_installed "test,embeddings"
    # The model's derivation (~6 s of CPU) beside the byte-compiling and the collection, and npm's install beside all
    step "embedding model"; ensure_embed_model & derived=$!
    compile_sources plur_desk tests/support bench
    if [ $# -eq 0 ]; then cache_test_modules; fi
    wait "$derived"; wait_node_modules
    step "running the tests"
    # The whole suite on four workers for the two cores of the machine CI runs on (PYTEST_WORKERS to change that):
    # the extra ones fill the time a test waits on a timer, a child process or the disk (the suite is ~410 CPU s;
    # on a quiet machine 3, 4 and 5 workers took 228-240, 211-223 and 221 s). Each test file runs on one worker:
    # its module fixtures are made once and its tests run in their order. With arguments, exactly what they ask
    # (add -n 2 for a parallel run of a part).
    # The slowest tests are listed after the whole suite, so a run that got slower says where.
    if [ $# -eq 0 ]; then set -- -n "${PYTEST_WORKERS:-4}" --dist loadfile --durations=25; fi
    # A crash (SIGSEGV, SIGABRT) prints every thread's Python stack in every process, also after pytest's own
    # fault handler is gone (at exit): a full run once ended in exit 139 with no cause on record.
    export PYTHONFAULTHANDLER=1
    exec "$VENV/bin/python" -m pytest -q "$@"
    ;;
  lint)
    STEPS=3
    step "Python environment"; ensure_venv
    step "plur_desk and the lint tools"; ensure_installed "test,embeddings"
    step "ruff and mypy"
    "$VENV/bin/python" -m ruff check .
    "$VENV/bin/python" -m ruff format --check .
    exec "$VENV/bin/python" -m mypy
    ;;
  *) echo "usage: ./dev.sh run|test|lint [args]" >&2; exit 2 ;;
esac
