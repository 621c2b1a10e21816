#!/usr/bin/env bash
# A local multi-process jobmesh mesh on 127.0.0.1, every node its own
# process with a fresh repo:
#
#   1. a bootstrap node that also serves the dev chain (jobnode bootstrap
#      --devchain), which deploys the escrow and runs a faucet;
#   2. PROCESSORS processors (default 4), each funded from the faucet
#      (jobnode wallet fund), staked (jobnode stake) and started with only
#      --eth-rpc (the dev chain tells them the escrow's address);
#   3. a client node (jobnode client), funded, that submits the Mandelbrot
#      example with 'jobnode job submit --wait' and fetches the picture.
#
# It then checks that the job settled on chain: the summary says so, the
# processors hold escrow credit, and the credits (payouts plus the
# creator's refund) add up to the price. Every process is stopped on exit.
#
# Environment:
#   JOBNODE     a jobnode binary to use (default: build ./cmd/jobnode)
#   PROCESSORS  number of processors (default 4)
#   WORK        directory for repos and logs (default: a new temp dir,
#               removed on exit unless KEEP_WORK=1)
#   TIMEOUT     seconds the job may take from submission (default 300)
#
# Exit status: 0 when the job settled and every check passed; 3 when the
# jobnode binary has no 'client' or 'job submit' command (the mesh and the
# chain were checked up to there); anything else is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

PROCESSORS=${PROCESSORS:-4}
TIMEOUT=${TIMEOUT:-300}
PRICE=1000000000000000        # 0.001 ETH, in wei
FUNDING=10000000000000000000  # 10 ETH a wallet
STAKE=1000000000000000000     # 1 ETH, the dev escrow's minimum stake
own_work=0
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/jobmesh-mp.XXXXXX")
	own_work=1
fi
mkdir -p "$WORK"

pids=()
status=1
cleanup() {
	status=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	# Give the daemons a moment to shut down cleanly, then make sure.
	for _ in $(seq 1 50); do
		alive=0
		for pid in "${pids[@]}"; do
			if kill -0 "$pid" 2>/dev/null; then alive=1; fi
		done
		[ "$alive" = 0 ] && break
		sleep 0.2
	done
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ "$status" != 0 ] && [ "$status" != 3 ]; then
		for log in "$WORK"/*.log; do
			[ -f "$log" ] || continue
			echo "---- $log (last 30 lines)" >&2
			tail -n 30 "$log" >&2
		done
	fi
	if [ "$own_work" = 1 ] && [ "${KEEP_WORK:-0}" != 1 ]; then
		rm -rf "$WORK"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { echo "multiprocess: $*"; }
fail() {
	echo "multiprocess: FAIL: $*" >&2
	exit 1
}

# until_ok SECONDS WHAT CMD...: poll CMD until it succeeds.
until_ok() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -ge "$deadline" ] && fail "timed out waiting for $what"
		sleep 0.2
	done
}

if [ -z "${JOBNODE:-}" ]; then
	say "building jobnode"
	go build -o "$WORK/jobnode" ./cmd/jobnode
	JOBNODE="$WORK/jobnode"
fi
jn() { "$JOBNODE" "$@"; }

# init_repo NAME: a fresh repo listening on loopback ports chosen by the OS.
init_repo() {
	jn init --repo "$WORK/$1" --listen /ip4/127.0.0.1/tcp/0 --listen /ip4/127.0.0.1/udp/0/quic-v1 >/dev/null
}

# start NAME ARGS...: a daemon in the background, logging to NAME.log. It
# runs the binary itself (not through a function, which would fork a
# subshell), so $! is the daemon and the trap stops the right process.
start() {
	local name=$1
	shift
	"$JOBNODE" "$@" --log-level warn >"$WORK/$name.log" 2>&1 &
	pids+=($!)
}

api_up() { [ -s "$WORK/$1/api" ]; }

# 1. The bootstrap node and the dev chain.
init_repo boot
start boot bootstrap --repo "$WORK/boot" --devchain 127.0.0.1:0
until_ok 60 "the bootstrap node" api_up boot
RPC=$(sed -n 's/^devchain //p' "$WORK/boot.log" | head -n 1)
ESCROW=$(sed -n 's/^escrow //p' "$WORK/boot.log" | head -n 1)
[ -n "$RPC" ] && [ -n "$ESCROW" ] || fail "the bootstrap node printed no dev chain"
BOOT=$(jn id --repo "$WORK/boot" | sed -n 2p)
say "dev chain $RPC, escrow $ESCROW, bootstrap $BOOT"

# 2. Processors: funded by the faucet, staked, started with only --eth-rpc.
for i in $(seq 1 "$PROCESSORS"); do
	p="p$i"
	init_repo "$p"
	jn wallet fund --repo "$WORK/$p" --eth-rpc "$RPC" --amount "$FUNDING" >/dev/null
	jn stake --repo "$WORK/$p" --eth-rpc "$RPC" --amount "$STAKE" >/dev/null
	jn stake status --repo "$WORK/$p" --eth-rpc "$RPC" --json | grep -q '"counted": true' ||
		fail "$p's stake does not count"
	start "$p" process --repo "$WORK/$p" --bootstrap "$BOOT" --eth-rpc "$RPC"
done
for i in $(seq 1 "$PROCESSORS"); do
	until_ok 60 "processor p$i" api_up "p$i"
done
processors_known() {
	[ "$(jn nodes --repo "$WORK/$1" | tail -n +2 | grep -c .)" -ge "$PROCESSORS" ]
}
until_ok 90 "the bootstrap node to know $PROCESSORS processors" processors_known boot
say "$PROCESSORS processors staked and advertised"

if ! jn client --help >/dev/null 2>&1 || ! jn job submit --help >/dev/null 2>&1; then
	say "this jobnode has no 'client' or 'job submit' command: stopping before the DApp"
	exit 3
fi

# 3. The DApp: a client node, funded, submits the Mandelbrot example.
init_repo client
# The job's escrow terms ([client]): a short quiet period after the last
# join, as every processor of this mesh joins within seconds.
sed -i.bak 's/^quiet = .*/quiet = "5s"/' "$WORK/client/config.toml"
grep -q '^quiet = "5s"' "$WORK/client/config.toml" || fail "the client's config has no [client] quiet"
jn wallet fund --repo "$WORK/client" --eth-rpc "$RPC" --amount "$FUNDING" >/dev/null
start client client --repo "$WORK/client" --bootstrap "$BOOT" --eth-rpc "$RPC"
until_ok 60 "the client node" api_up client
until_ok 90 "the client to know $PROCESSORS processors" processors_known client

jn example mandelbrot --out "$WORK/job" >/dev/null
say "submitting the Mandelbrot example"
timeout "$TIMEOUT" "$JOBNODE" job submit --repo "$WORK/client" \
	--code "$WORK/job/mandelbrot.wasm" --data "$WORK/job/mandelbrot.tiles" --block-size 64 --microjobs 3 --blocks-per-micro 4 \
	--output png-grid --columns 6 --price "$PRICE" --wait --json >"$WORK/summary.json" ||
	fail "job submit --wait failed or timed out"

field() { sed -n 's/^[[:space:]]*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$WORK/summary.json" | head -n 1; }
ID=$(field id)
STATE=$(field state)
TX=$(field settlement_tx)
say "job $ID: $STATE, settlement $TX"
[ -n "$ID" ] || fail "no job ID in the summary"
[ "$(echo "$STATE" | tr '[:upper:]' '[:lower:]')" = settled ] || fail "the job is $STATE, not settled"
[ -n "$TX" ] || fail "no settlement transaction in the summary"
grep -q '"payouts"' "$WORK/summary.json" || fail "no payouts in the summary"

# The chain agrees: the processors hold escrow credit, and every credit
# (payouts, and the creator's refund) adds up to the price.
credit() { jn wallet balance --repo "$WORK/$1" --eth-rpc "$RPC" --json | sed -n 's/.*"escrow_credit": "\([0-9]*\)".*/\1/p'; }
total=0
paid=0
for i in $(seq 1 "$PROCESSORS"); do
	c=$(credit "p$i")
	say "p$i credit $c wei"
	[ "$c" != 0 ] && paid=$((paid + 1))
	total=$((total + c))
done
refund=$(credit client)
say "client refund credit $refund wei"
total=$((total + refund))
[ "$paid" -ge 2 ] || fail "only $paid processors were paid"
[ "$total" = "$PRICE" ] || fail "payouts plus refund are $total wei, the price is $PRICE"

# The output: the assembled picture.
jn job get --repo "$WORK/client" "$ID" -o "$WORK/out" >/dev/null || fail "job get failed"
ls "$WORK"/out/*.png >/dev/null 2>&1 || fail "no picture in the job's output"
say "OK: job $ID settled on chain, $paid processors paid, value conserved, picture in $WORK/out"
