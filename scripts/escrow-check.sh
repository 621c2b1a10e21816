#!/usr/bin/env bash
# Recompiles the escrow contracts into a scratch directory and fails if the
# committed artifacts or Go bindings differ from a fresh compile.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
ESCROW_OUT="$TMP" "$REPO/scripts/escrow-gen.sh"
status=0
for f in escrow/artifacts/Escrow.abi escrow/artifacts/Escrow.bin escrow/artifacts/solc-version.txt \
	escrow/testdata/ReentrantWithdrawer.abi escrow/testdata/ReentrantWithdrawer.bin \
	escrow/bindings/escrow.go escrow/attacker_bindings_test.go; do
	if ! diff -u "$REPO/$f" "$TMP/$f" >&2; then
		echo "escrow-check: $f differs from a fresh compile; run scripts/escrow-gen.sh" >&2
		status=1
	fi
done
[ "$status" -eq 0 ] && echo "escrow-check: artifacts and bindings match the source"
exit "$status"
