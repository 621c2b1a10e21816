#!/usr/bin/env bash
# Compiles the escrow contract (and its reentrancy test contract) with the
# pinned solc-js, writes the ABI/bytecode artifacts and regenerates the abigen
# v2 Go bindings. ESCROW_OUT (default: the repository root) is where the
# generated files go; scripts/escrow-check.sh points it at a scratch directory.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${ESCROW_OUT:-$REPO}"
SOLC_VERSION=0.8.37
ABIGEN="github.com/ethereum/go-ethereum/cmd/abigen@v1.17.10"
CACHE="${JOBMESH_CACHE:-$HOME/.cache/jobmesh}"
SOLC_DIR="$CACHE/solc"

if [ ! -f "$SOLC_DIR/node_modules/solc/package.json" ] ||
	[ "$(node -p "require('$SOLC_DIR/node_modules/solc/package.json').version")" != "$SOLC_VERSION" ]; then
	mkdir -p "$SOLC_DIR"
	npm install --silent --no-audit --no-fund --prefix "$SOLC_DIR" "solc@$SOLC_VERSION" >&2
fi

mkdir -p "$OUT/escrow/artifacts" "$OUT/escrow/testdata" "$OUT/escrow/bindings"

SOLC_DIR="$SOLC_DIR" SRC="$REPO/escrow" OUT="$OUT/escrow" node - <<'JS'
const fs = require('fs');
const path = require('path');
const solc = require(path.join(process.env.SOLC_DIR, 'node_modules', 'solc'));
const src = process.env.SRC, out = process.env.OUT;
const files = {
  'Escrow.sol': path.join(src, 'contracts', 'Escrow.sol'),
  'ReentrantWithdrawer.sol': path.join(src, 'testdata', 'ReentrantWithdrawer.sol'),
};
const sources = {};
for (const [name, file] of Object.entries(files)) sources[name] = { content: fs.readFileSync(file, 'utf8') };
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 10000 },
    evmVersion: 'cancun',
    viaIR: true,
    metadata: { appendCBOR: false },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const res = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of res.errors || []) {
  process.stderr.write(e.formattedMessage + '\n');
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
const targets = [
  ['Escrow.sol', 'Escrow', path.join(out, 'artifacts')],
  ['ReentrantWithdrawer.sol', 'ReentrantWithdrawer', path.join(out, 'testdata')],
];
for (const [file, name, dir] of targets) {
  const c = res.contracts[file][name];
  fs.writeFileSync(path.join(dir, name + '.abi'), JSON.stringify(c.abi, null, 1) + '\n');
  fs.writeFileSync(path.join(dir, name + '.bin'), c.evm.bytecode.object + '\n');
}
fs.writeFileSync(path.join(out, 'artifacts', 'solc-version.txt'), solc.version() + '\n');
JS

go run "$ABIGEN" --v2 --pkg bindings --type Escrow \
	--abi "$OUT/escrow/artifacts/Escrow.abi" --bin "$OUT/escrow/artifacts/Escrow.bin" \
	--out "$OUT/escrow/bindings/escrow.go"
go run "$ABIGEN" --v2 --pkg escrow --type ReentrantWithdrawer \
	--abi "$OUT/escrow/testdata/ReentrantWithdrawer.abi" --bin "$OUT/escrow/testdata/ReentrantWithdrawer.bin" \
	--out "$OUT/escrow/attacker_bindings_test.go"
