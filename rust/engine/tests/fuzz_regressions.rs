//! The fuzz targets' inputs on stable Rust: every seed (`fuzz/seeds/<target>/`) and every input
//! that once broke an invariant (`fuzz/regressions/<target>/`) goes through the same checks the
//! cargo-fuzz targets run (`fuzz/src/checks.rs`, compiled in here). See fuzz/README.md.

#[path = "../../../fuzz/src/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The files of `fuzz/<kind>/<target>/`, sorted (none if the folder is missing).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz").join(kind).join(target);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.map(|e| e.expect("a readable entry").path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// Runs every seed and regression input of `target` through `check`; returns how many there were.
fn run(target: &str, check: fn(&[u8])) -> usize {
    let mut count = 0;
    for kind in ["seeds", "regressions"] {
        for path in inputs(kind, target) {
            let data = std::fs::read(&path).expect("a readable input");
            let started = Instant::now();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "fuzz/{kind}/{target}/{} breaks an invariant",
                path.file_name().unwrap().to_string_lossy()
            );
            // Some regressions were hangs (exponential `as(...)` resolution): keep them fast.
            assert!(started.elapsed() < Duration::from_secs(60), "{} took {:?}", path.display(), started.elapsed());
            count += 1;
        }
    }
    count
}

#[test]
fn notation_inputs() {
    assert!(run("notation", checks::notation) > 0);
}

#[test]
fn position_text_inputs() {
    assert!(run("position_text", checks::position_text) > 0);
}

#[test]
fn position_text_seeds_print_back_byte_identical() {
    // The seeds are `to_text` output: canonical text must come back unchanged.
    let variant = checks::variant();
    for path in inputs("seeds", "position_text") {
        let text = std::fs::read_to_string(&path).expect("a text seed");
        let pos = taikyoku_engine::Position::from_text(variant.clone(), &text).expect("a seed parses");
        assert_eq!(pos.to_text(), text, "{}", path.display());
    }
}

#[test]
fn piece_table_inputs() {
    assert!(run("piece_table", checks::piece_table) > 0);
}

#[test]
fn replay_inputs() {
    assert!(run("replay", checks::replay) > 0);
}

#[test]
fn square_inputs() {
    assert!(run("square", checks::square) > 0);
}

#[test]
fn rules_inputs() {
    assert!(run("rules", checks::rules) > 0);
}

#[test]
fn move_state_inputs() {
    assert!(run("move_state", checks::move_state) > 0);
}

#[test]
fn move_state_seeds_reach_what_they_name() {
    // The seeds load the variants and mutations their names say: a seed whose table stopped
    // loading would check nothing.
    for path in inputs("seeds", "move_state") {
        let data = std::fs::read(&path).expect("a readable input");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (variant, _) =
            checks::move_state_variant(&data).unwrap_or_else(|| panic!("{name}: the variant does not load"));
        assert!(name.starts_with(&variant.name), "{name}: loads {}", variant.name);
        assert_eq!(name.contains("option"), !variant.options.is_empty(), "{name}: options {:?}", variant.options);
    }
}

#[test]
fn move_state_on_generated_inputs() {
    // A few dozen inputs from a fixed stream, as a short fuzzing run on stable Rust: every
    // variant, rule options and mutated types, short warm-ups, takes-back among the moves.
    let mut seed = 28u64;
    let mut next = || {
        seed = taikyoku_engine::hash::splitmix64(seed);
        seed
    };
    const MOVES: [&str; 6] = [
        "hook(orth)",
        "lion igui",
        "rangecap(all) jump(f,2)",
        "area(2) teleport",
        "hop(side,1) rankhop(b)",
        "jumplimit(fdiag,2,3) limit(fdiag,4)",
    ];
    for round in 0..32u64 {
        let mut data = vec![next() as u8];
        if data[0] & 4 != 0 {
            data.extend_from_slice(&(next() as u16).to_le_bytes());
            data.extend_from_slice(MOVES[round as usize % MOVES.len()].as_bytes());
            data.push(0);
        }
        data.push(next() as u8 % 24);
        data.push(next() as u8);
        for _ in 0..12 {
            let word = next() as u16;
            data.extend_from_slice(&(if word.is_multiple_of(5) { word | 0x8000 } else { word & 0x7FFF }).to_le_bytes());
        }
        let outcome = std::panic::catch_unwind(|| checks::move_state(&data));
        assert!(outcome.is_ok(), "input {round} breaks an invariant: {data:?}");
    }
}

#[test]
fn regressions_are_rejected_or_sane() {
    use taikyoku_engine::table::PieceTable;
    use taikyoku_engine::{Atom, Geometry, Position};
    // What each fix decided, stated directly (the invariants above only say "no panic").
    let g = Geometry::new(36, 36);
    assert_eq!(g.parse_square("05r"), None);
    assert_eq!(g.parse_square("5r"), g.square_from_file_rank(5, 18));
    let read = |name: &str| {
        std::fs::read_to_string(inputs("regressions", "piece_table").into_iter().find(|p| p.ends_with(name)).unwrap())
            .unwrap()
    };
    for name in ["leap-minus-128-dx", "leap-minus-128-dy"] {
        let e = PieceTable::parse(&read(name), &[]).unwrap_err();
        assert!(e.line == 1 && e.message.contains("bad leap"), "{name}: {e}");
    }
    let e = PieceTable::parse(&read("key-underscore"), &[]).unwrap_err();
    assert!(e.line == 1 && e.message.contains("upper-case letters"), "{e}");
    let lion = PieceTable::parse(&read("lion-igui"), &[]).unwrap();
    assert_eq!(lion.get(0).atoms, vec![Atom::Lion]);
    let chain = PieceTable::parse(&read("as-chain-exponential"), &[]).unwrap();
    assert_eq!(chain.get(0).atoms, vec![Atom::Slide { dir: 0, max: 1 }]);
    let text = std::fs::read_to_string(&inputs("regressions", "position_text")[0]).unwrap();
    let e = Position::from_text(checks::variant(), &text).unwrap_err();
    assert!(matches!(e, taikyoku_engine::PositionTextError::MoveNumber(_)), "{e}");
    let max = text.replace(" b 4294967295", " b 2147483648");
    assert_eq!(Position::from_text(checks::variant(), &max).unwrap().move_number(), 1 << 31);
}
