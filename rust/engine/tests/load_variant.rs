//! Variants loaded from files at run time (`Variant::load_files`, `Variant::register`): a copy of
//! a built-in variant's three files plays exactly the built-in games, and bad files, clashing
//! names and clashing Gym ids are refused with errors that say why.
//!
//! The loaded variants are process-wide: every test uses its own names.

use std::path::{Path, PathBuf};
use taikyoku_engine::random::random_playout;
use taikyoku_engine::{built_in_variant_names, variant_names, variant_sources, Game, Variant, VariantError};

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taikyoku-load-variant-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes built-in `variant`'s three files into `dir` as `name.*`, with `edit` applied to the
/// rules file; returns the rules file's path.
fn copy_variant(variant: &str, dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let (_, sources) = variant_sources(variant).unwrap();
    std::fs::write(dir.join(format!("{name}.pieces")), sources.pieces).unwrap();
    std::fs::write(dir.join(format!("{name}.setup")), sources.setup).unwrap();
    let rules = dir.join(format!("{name}.rules"));
    std::fs::write(&rules, edit(sources.rules)).unwrap();
    rules
}

/// The rules file with its `gym-id` line replaced.
fn with_gym_id(rules: &str, id: &str) -> String {
    rules
        .lines()
        .map(|l| if l.starts_with("gym-id") { format!("gym-id {id}") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of a seeded random game: every position and move along the way.
fn random_game_text(variant: &str, seed: u64, plies: usize) -> String {
    let mut game = Game::new(Variant::load(variant, &[]).unwrap());
    random_playout(&mut game, seed, plies);
    game.to_text()
}

#[test]
fn a_copied_variant_plays_the_built_in_games() {
    for built_in in ["tenjiku", "daidai"] {
        let dir = scratch(built_in);
        let copy = format!("copied-{built_in}");
        let rules = copy_variant(built_in, &dir, &copy, |r| with_gym_id(r, &format!("Copied{built_in}-v0")));
        assert_eq!(Variant::load_files(&rules).unwrap(), copy);
        assert!(variant_names().contains(&copy.as_str()));
        assert!(!built_in_variant_names().contains(&copy.as_str()));
        for seed in 1..=4 {
            let (ours, theirs) = (random_game_text(&copy, seed, 400), random_game_text(built_in, seed, 400));
            assert_eq!(ours, theirs, "{copy}, seed {seed}");
        }
        let (original, copied) = (Variant::load(built_in, &[]).unwrap(), Variant::load(&copy, &[]).unwrap());
        assert_eq!(copied.title(), original.title());
        assert_eq!(copied.gym_id(), format!("Copied{built_in}-v0"));
        assert!(original.is_built_in() && !copied.is_built_in());
        // Rule options come along with the files.
        assert_eq!(copied.rule_options(), original.rule_options());
        // Loading the same files again is a no-op.
        assert_eq!(Variant::load_files(&rules).unwrap(), copy);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn names_and_gym_ids_must_be_free() {
    let dir = scratch("names");
    let expect = |rules: &Path, fragment: &str| {
        let e = Variant::load_files(rules).unwrap_err();
        assert!(e.to_string().contains(fragment), "{}: {e}", rules.display());
    };
    // A built-in name.
    expect(&copy_variant("tenjiku", &dir, "tenjiku", |r| with_gym_id(r, "Other-v0")), "is a built-in variant");
    // A built-in variant's Gym id (the copy keeps the `gym-id Tenjiku-v0` line).
    expect(&copy_variant("tenjiku", &dir, "sametitle", |r| r.to_string()), "gym-id 'Tenjiku-v0' is already tenjiku's");
    // A name that cannot be a variant's.
    expect(&copy_variant("tenjiku", &dir, "9lives", |r| with_gym_id(r, "Lives-v0")), "cannot name a variant");
    // Without a gym-id line, the id comes from the name.
    let rules = copy_variant("tenjiku", &dir, "plain", |r| {
        r.lines().filter(|l| !l.starts_with("gym-id")).collect::<Vec<_>>().join("\n")
    });
    assert_eq!(Variant::load_files(&rules).unwrap(), "plain");
    assert_eq!(Variant::load("plain", &[]).unwrap().gym_id(), "Plain-v0");
    // Other files under a loaded name are refused; the loaded variant is unchanged.
    let other = copy_variant("daidai", &dir, "plain", |r| with_gym_id(r, "Plain2-v0"));
    expect(&other, "already loaded in this process");
    assert_eq!(Variant::load("plain", &[]).unwrap().geometry.width, 16);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_files_get_their_file_and_line() {
    let dir = scratch("bad");
    let rules = copy_variant("tenjiku", &dir, "broken", |r| with_gym_id(r, "Broken-v0"));
    // A missing file: an I/O error naming it, with the system's error number.
    std::fs::remove_file(dir.join("broken.setup")).unwrap();
    match Variant::load_files(&rules).unwrap_err() {
        VariantError::Io { path, errno, .. } => {
            assert!(path.ends_with("broken.setup"), "{path}");
            assert!(errno.is_some());
        }
        e => panic!("expected an I/O error, got {e}"),
    }
    // An unknown piece in the setup: its line.
    std::fs::write(dir.join("broken.setup"), "XX\n").unwrap();
    let e = Variant::load_files(&rules).unwrap_err();
    assert!(matches!(e, VariantError::Setup(_)) && e.to_string().contains("line 1"), "{e}");
    // A promoted-only piece must be marked: without the mark its name is no piece code.
    let (_, tenjiku) = variant_sources("tenjiku").unwrap();
    std::fs::write(dir.join("broken.setup"), tenjiku.setup).unwrap();
    std::fs::write(dir.join("broken.pieces"), tenjiku.pieces.replacen("royal promoted-only |", "royal |", 1)).unwrap();
    let e = Variant::load_files(&rules).unwrap_err();
    assert!(matches!(e, VariantError::Table(_)) && e.to_string().contains("marked `promoted-only`"), "{e}");
    // A bad rules line.
    std::fs::write(&rules, "board 16x16\ngym-id no id\n").unwrap();
    let e = Variant::load_files(&rules).unwrap_err();
    assert!(e.to_string().contains("rules file line 2"), "{e}");
    // Not a rules file at all.
    assert!(Variant::load_files(&dir.join("broken.pieces")).unwrap_err().to_string().contains("not a .rules file"));
    assert!(!variant_names().contains(&"broken"));
    std::fs::remove_dir_all(dir).unwrap();
}
