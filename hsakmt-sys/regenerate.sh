#!/usr/bin/env bash
# Regenerates hsakmt-sys/src/generated/*.rs from Debian's headers with the pinned bindgen and
# Debian's libclang 14 (pinned even when newer clangs are installed).
#
#   bash hsakmt-sys/regenerate.sh           rewrite the generated files
#   bash hsakmt-sys/regenerate.sh --check   regenerate in memory; exit 1 naming each file
#                                           that differs, 0 when all are identical
#
# Needs: libclang-14 (/usr/lib/llvm-14/lib), libhsakmt-dev, linux-libc-dev, libdrm-dev,
# libhsa-runtime-dev, libamdhip64-dev.
set -euo pipefail
export LIBCLANG_PATH=/usr/lib/llvm-14/lib
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --quiet -p hsakmt-sys-generate -- "$@"
