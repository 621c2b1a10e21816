#!/usr/bin/env bash
# Runs the escrow's end-to-end test against a real `geth --dev`. Installs
# geth v1.17.8 from the Go module proxy into $JOBMESH_CACHE/bin (default
# ~/.cache/jobmesh) if it is missing: outside the checkout, so later runs reuse it.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
GETH_VERSION=1.17.8
CACHE="${JOBMESH_CACHE:-$HOME/.cache/jobmesh}"
BIN="$CACHE/bin"
GETH="$BIN/geth"

if [ ! -x "$GETH" ] || ! "$GETH" version 2>/dev/null | grep -q "^Version: $GETH_VERSION"; then
	mkdir -p "$BIN"
	echo "escrow-geth: installing geth $GETH_VERSION into $BIN" >&2
	GOBIN="$BIN" go install "github.com/ethereum/go-ethereum/cmd/geth@v$GETH_VERSION"
fi

cd "$REPO"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
status=0
JOBMESH_GETH="$GETH" go test -count=1 -run '^TestGethDev$' -v ./escrow/ >"$out" 2>&1 || status=$?
grep -v '^\s*WARN \[' "$out" | tail -n 40
if [ "$status" -ne 0 ]; then
	exit "$status"
fi
if ! grep -q -- '--- PASS: TestGethDev' "$out"; then
	echo "escrow-geth: TestGethDev did not run" >&2
	exit 1
fi
