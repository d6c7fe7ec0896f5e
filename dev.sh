#!/usr/bin/env bash
# plur_desk's two entry points on a fresh Debian/Ubuntu machine (idempotent):
#   ./dev.sh run [STORE] [--demo] [--reviewer NAME]   install what the app needs, then launch it
#   ./dev.sh test [PYTEST ARGS]                        install what the tests need, then run them
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"; shift || true

QT_LIBS="libegl1 libgl1 libfontconfig1 libglib2.0-0 libxkbcommon0 libdbus-1-3 libx11-6 libxcb-cursor0 libxcb-icccm4
 libxcb-keysyms1 libxcb-image0 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 xvfb xauth"

apt_install() {
  command -v apt-get >/dev/null || { echo "note: not a Debian system; install Qt's libraries yourself" >&2; return 0; }
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

case "$mode" in
  run)
    apt_install $QT_LIBS
    python3 -m pip install -q -e '.[embeddings]'
    exec python3 -m plur_desk "$@"
    ;;
  test)
    apt_install $QT_LIBS appstream
    command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
    python3 -m pip install -q -e '.[test,embeddings]'
    (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
    exec python3 -m pytest -q "$@"
    ;;
  *) echo "usage: ./dev.sh run|test [args]" >&2; exit 2 ;;
esac
