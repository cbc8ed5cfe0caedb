#!/usr/bin/env bash
# Random self-play on the Taikyoku board, this engine against jh85/taikyokushogi (a public Rust
# Taikyoku engine), in one run: both play seeded uniformly random games until PLIES plies, runs
# interleaved; prints each run, the medians and the ratio, and with --callgrind the instructions
# per ply (the machine-independent figure). Issue 13's peer comparison (docs/PERFORMANCE.md).
#
#   benchmarks/peer_compare.sh PEER_DIR [PLIES] [RUNS] [--callgrind]
#
# PEER_DIR is a checkout of https://github.com/jh85/taikyokushogi (its Cargo.toml at the top).
# The peer is driven through its public API (Board::initial, legal_moves, apply, game_result) by a
# small driver crate written to a temporary directory; nothing of it is copied here.
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,12p' "$0"
    exit 2
fi
peer=$(cd "$1" && pwd)
plies=${2:-20000}
runs=${3:-5}
callgrind=${4:-}
[ -f "$peer/Cargo.toml" ] || { echo "$peer has no Cargo.toml: not a checkout of jh85/taikyokushogi" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<EOF
[package]
name = "peer-playout"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
taikyokushogi = { path = "$peer" }
rand = "0.8"
rand_chacha = "0.3"

[profile.release]
debug = false
EOF
cat > "$work/src/main.rs" <<'EOF'
//! `peer-playout PLIES`: seeded random games (seeds 1, 2, ...) until PLIES plies, each move drawn
//! uniformly from the peer's legal moves, as the taikyoku `playout` example does with its own.
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use taikyokushogi::Board;

fn main() {
    let plies: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let started = std::time::Instant::now();
    let (mut played, mut games) = (0usize, 0u64);
    while played < plies {
        games += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(games);
        let mut board = Board::initial();
        while played < plies && board.game_result().is_none() {
            let moves = board.legal_moves();
            if moves.is_empty() {
                break;
            }
            board.apply(&moves[rng.gen_range(0..moves.len())]);
            played += 1;
        }
    }
    println!("{played} plies ({games} games) in {:?}", started.elapsed());
}
EOF
echo "building the peer driver and the taikyoku playout example (release)..." >&2
(cd "$work" && cargo build --release -q)
(cd "$root" && cargo build --release -q -p taikyoku-engine --example playout)
ours="$root/target/release/examples/playout"
theirs="$work/target/release/peer-playout"

# "... in 123.4ms ..." -> milliseconds
ms() { python3 -c 'import re,sys; v,u=re.search(r" in ([0-9.]+)(ms|s|µs)",sys.stdin.read()).groups(); print(float(v)*{"ms":1,"s":1000,"µs":0.001}[u])'; }
ours_ms=(); theirs_ms=()
for i in $(seq "$runs"); do
    a=$("$ours" "$plies" taikyoku); b=$("$theirs" "$plies")
    echo "run $i  taikyoku: $a"
    echo "run $i  peer:     $b"
    ours_ms+=("$(echo "$a" | ms)"); theirs_ms+=("$(echo "$b" | ms)")
done
python3 - "$plies" "${ours_ms[*]}" "${theirs_ms[*]}" <<'EOF'
import statistics, sys
plies = int(sys.argv[1])
ours, theirs = (statistics.median(map(float, s.split())) for s in sys.argv[2:4])
print(f"medians: taikyoku {ours:.1f} ms ({plies / ours * 1000:,.0f} plies/s), "
      f"peer {theirs:.1f} ms ({plies / theirs * 1000:,.0f} plies/s): taikyoku is {theirs / ours:.2f}x as fast")
EOF
if [ "$callgrind" = "--callgrind" ]; then
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,; }
    a=$(count "$ours" "$plies" taikyoku); b=$(count "$theirs" "$plies")
    python3 -c "p=$plies; a=$a; b=$b; print(f'instructions per ply: taikyoku {a/p:,.0f}, peer {b/p:,.0f}: {b/a:.2f}x fewer')"
fi
