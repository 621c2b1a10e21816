#!/usr/bin/env bash
# Builds the jobnode binary the one way releases, the Dockerfile and CI
# build it: a static binary (no cgo), paths trimmed, symbol tables
# stripped. The VCS revision is stamped by the go command when the source
# is a git checkout (jobnode version prints it).
#   scripts/build.sh [OUTPUT]   (default bin/jobnode)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-bin/jobnode}"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT" ./cmd/jobnode
