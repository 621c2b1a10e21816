#!/usr/bin/env bash
# Runs the escrow's end-to-end test against a real `geth --dev`. Installs
# geth from the Go module proxy into $JOBMESH_CACHE/bin (default
# ~/.cache/jobmesh) if it is missing: outside the checkout, so later runs reuse it.
# The geth version is go.mod's go-ethereum version, so the node's client
# library and the chain it is tested against cannot drift apart.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
GETH_VERSION="$(cd "$REPO" && go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)"
GETH_VERSION="${GETH_VERSION#v}"
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
