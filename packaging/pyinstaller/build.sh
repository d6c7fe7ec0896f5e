#!/usr/bin/env bash
# Builds the one-folder bundle and runs its --self-check.
#   packaging/pyinstaller/build.sh [OUT_DIR]      (default: dist/; the bundle is OUT_DIR/plur-desk/)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-dist}"
work="${out%/}/.build"
# The project's venv when there is one (a system Python is externally managed), else $PYTHON or python3.
py="${PYTHON:-}"
if [ -z "$py" ]; then if [ -x .venv/bin/python ]; then py=.venv/bin/python; else py=python3; fi; fi
"$py" -c 'import PyInstaller' 2>/dev/null || "$py" -m pip install -q 'pyinstaller>=6.10'
"$py" packaging/build_embed_model.py  # the int8-compute embedding model, bundled with plur_desk's resources
rm -rf "$work" "${out%/}/plur-desk"
"$py" -m PyInstaller --noconfirm --log-level ERROR --workpath "$work" --distpath "$out" \
  packaging/pyinstaller/plur-desk.spec
rm -rf "$work"
QT_QPA_PLATFORM=offscreen "${out%/}/plur-desk/plur-desk" --self-check
du -sh "${out%/}/plur-desk"
