//! What a run generates. Everything here goes into the manifest and decides the output bytes;
//! the thread count does not.

use serde::{Deserialize, Serialize};
use taikyoku_search::evaluation::{HeuristicConfig, OpponentMoves, PriorMode};
use taikyoku_search::mcts::{MctsConfig, RootRule};

/// File format of the shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Arrow IPC files (`.arrow`), buffers compressed with zstd.
    Arrow,
    /// Parquet files (`.parquet`), zstd.
    Parquet,
}

impl Format {
    /// File-name extension without the dot: `"arrow"` or `"parquet"`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Arrow => "arrow",
            Format::Parquet => "parquet",
        }
    }
}

/// MCTS settings of a run (both sides use the same player and share one tree).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MctsSettings {
    /// Simulations per move, at least 1 (64 by default).
    pub simulations: u32,
    /// Exploration constant, positive (1.5).
    pub c_puct: f32,
    /// Concentration of the Dirichlet noise at the root, positive (0.03).
    pub dirichlet_alpha: f32,
    /// Weight the root noise is mixed in with, in [0, 1] (0.25; 0 disables it).
    pub dirichlet_fraction: f32,
    /// Moves are drawn from the visit counts raised to `1 / temperature` (1.0); 0 always plays
    /// the most visited move.
    pub temperature: f32,
    /// Plies of the game during which the temperature applies (30); after them the most visited
    /// move is played.
    pub temperature_plies: u32,
    /// Keeps the chosen subtree for the next move (one tree serves both sides); `true`.
    pub reuse_tree: bool,
    /// "captures" (heuristic priors) or "uniform".
    pub priors: String,
    /// Random plies played before the heuristic evaluation (0: evaluate the leaf itself).
    pub rollout_plies: u32,
    /// Where the heuristic counts the opponent's moves at a leaf (`OpponentMoves`): "parent"
    /// (the default: at the parent node, one move generation per leaf) or "leaf" (a second
    /// generation). Manifests written before the setting were made with "leaf".
    #[serde(default = "opponent_moves_before_the_setting")]
    pub opponent_moves: String,
    /// Set for a Gumbel root (`root="gumbel"`), absent for PUCT (so PUCT manifests read as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gumbel: Option<GumbelSettings>,
}

/// The Gumbel root's settings (`taikyoku_search::mcts::RootRule::Gumbel`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GumbelSettings {
    /// Moves sampled at the root, at least 1 (16).
    pub considered: u32,
    /// Scale of the Gumbel noise, >= 0 (1.0; 0: no noise).
    pub scale: f32,
}

impl Default for GumbelSettings {
    fn default() -> Self {
        match RootRule::GUMBEL {
            RootRule::Gumbel { considered, scale } => GumbelSettings { considered, scale },
            RootRule::Puct => unreachable!("GUMBEL is a Gumbel rule"),
        }
    }
}

impl Default for MctsSettings {
    fn default() -> Self {
        let engine = MctsConfig::default();
        MctsSettings {
            simulations: 64,
            c_puct: engine.c_puct,
            dirichlet_alpha: engine.dirichlet_alpha,
            dirichlet_fraction: engine.dirichlet_fraction,
            temperature: engine.temperature,
            temperature_plies: engine.temperature_plies as u32,
            reuse_tree: engine.reuse_tree,
            priors: "captures".into(),
            rollout_plies: 0,
            opponent_moves: OpponentMoves::Parent.name().into(),
            gumbel: None,
        }
    }
}

impl MctsSettings {
    /// The search settings; those not stored here (first-play urgency, virtual loss) keep
    /// `MctsConfig`'s defaults.
    pub fn engine_config(&self) -> MctsConfig {
        MctsConfig {
            simulations: self.simulations,
            c_puct: self.c_puct,
            dirichlet_alpha: self.dirichlet_alpha,
            dirichlet_fraction: self.dirichlet_fraction,
            temperature: self.temperature,
            temperature_plies: self.temperature_plies as usize,
            reuse_tree: self.reuse_tree,
            root: self.root_rule(),
            ..MctsConfig::default()
        }
    }

    /// The settings of one position's search (`taikyoku.mcts_search`, `network::search_position`
    /// callers): these, without root noise or a temperature, so the most visited move is chosen.
    pub fn position_config(&self) -> MctsConfig {
        MctsConfig { dirichlet_fraction: 0.0, temperature: 0.0, temperature_plies: 0, ..self.engine_config() }
    }

    /// The root rule: Gumbel when `gumbel` is set, else PUCT.
    pub fn root_rule(&self) -> RootRule {
        match &self.gumbel {
            Some(g) => RootRule::Gumbel { considered: g.considered, scale: g.scale },
            None => RootRule::Puct,
        }
    }

    /// `"gumbel"` or `"puct"`.
    pub fn root_name(&self) -> &'static str {
        if self.gumbel.is_some() {
            "gumbel"
        } else {
            "puct"
        }
    }

    /// The evaluator settings: `priors`, `rollout_plies` and `opponent_moves` from here, the
    /// rest `HeuristicConfig`'s defaults.
    pub fn heuristic_config(&self) -> HeuristicConfig {
        let defaults = HeuristicConfig::default();
        let priors = if self.priors == "uniform" { PriorMode::Uniform } else { defaults.priors };
        let opponent_moves = OpponentMoves::from_name(&self.opponent_moves).unwrap_or(defaults.opponent_moves);
        HeuristicConfig { priors, rollout_plies: self.rollout_plies, opponent_moves, ..defaults }
    }

    /// Checks every setting against its range (`MCTS_LIMITS`) and the names against their
    /// choices; the error names the setting and the value given.
    pub fn validate(&self) -> Result<(), SettingsError> {
        check_integer("simulations", self.simulations.into())?;
        check_integer("temperature_plies", self.temperature_plies.into())?;
        check_integer("rollout_plies", self.rollout_plies.into())?;
        for (name, value) in [
            ("c_puct", self.c_puct),
            ("dirichlet_alpha", self.dirichlet_alpha),
            ("dirichlet_fraction", self.dirichlet_fraction),
            ("temperature", self.temperature),
        ] {
            check_real(name, value.into())?;
        }
        if self.priors != "captures" && self.priors != "uniform" {
            return Err(SettingsError::new(
                "priors",
                format!("unknown priors '{}' (use 'captures' or 'uniform')", self.priors),
            ));
        }
        if OpponentMoves::from_name(&self.opponent_moves).is_none() {
            return Err(SettingsError::new(
                "opponent_moves",
                format!("unknown opponent_moves '{}' (use 'parent' or 'leaf')", self.opponent_moves),
            ));
        }
        if let Some(gumbel) = &self.gumbel {
            check_integer("gumbel_considered", gumbel.considered.into())?;
            check_real("gumbel_scale", gumbel.scale.into())?;
        }
        Ok(())
    }
}

/// `MctsSettings::opponent_moves` of a manifest written before the setting existed.
fn opponent_moves_before_the_setting() -> String {
    OpponentMoves::Leaf.name().into()
}

/// The range of an MCTS setting: `[low, high]`, or `(low, high]` when `low_open`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// The setting's name (`c_puct`...), as Python and the manifest call it.
    pub name: &'static str,
    /// Whether it is an integer (else a real number).
    pub integer: bool,
    /// Lowest value.
    pub low: f64,
    /// Highest value.
    pub high: f64,
    /// Whether `low` itself is excluded.
    pub low_open: bool,
}

const fn limit(name: &'static str, integer: bool, low: f64, high: f64, low_open: bool) -> Limit {
    Limit { name, integer, low, high, low_open }
}

/// Every numeric MCTS setting with its range: the one definition that the engine
/// (`MctsSettings::validate`), the Python package (`taikyoku._core.MCTS_LIMITS`, read by
/// `taikyoku.selfplay` and `taikyoku.mcts_search`) and the command line check against. A
/// Dirichlet concentration above 1,000 makes the noise a constant and its gamma draws slow; the
/// real settings are stored as `f32`, and bounds well inside its range keep them meaningful.
pub const MCTS_LIMITS: [Limit; 9] = [
    limit("simulations", true, 1.0, u32::MAX as f64, false),
    limit("c_puct", false, 0.0, 1e6, true),
    limit("dirichlet_alpha", false, 0.0, 1e3, true),
    limit("dirichlet_fraction", false, 0.0, 1.0, false),
    limit("temperature", false, 0.0, 1e6, false),
    limit("temperature_plies", true, 0.0, u32::MAX as f64, false),
    limit("rollout_plies", true, 0.0, u32::MAX as f64, false),
    limit("gumbel_considered", true, 1.0, (1u32 << 20) as f64, false),
    limit("gumbel_scale", false, 0.0, 1e6, false),
];

/// The range of the MCTS setting `name` (a name of `MCTS_LIMITS`).
pub fn mcts_limit(name: &str) -> Option<Limit> {
    MCTS_LIMITS.iter().copied().find(|l| l.name == name)
}

/// A real number as Python's `repr` writes it (`1.5`, `3e+38`, `1e-05`, `nan`, `inf`): messages
/// quote the value given as the user wrote it, never as a 300-digit decimal.
pub fn show_real(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let magnitude = x.abs();
    if magnitude == 0.0 || (1e-4..1e16).contains(&magnitude) {
        let plain = format!("{x}");
        return if plain.contains('.') { plain } else { format!("{plain}.0") };
    }
    exponent_form(format!("{x:e}"))
}

/// A bound as Python's `format(x, "g")` writes it (`0`, `1000`, `1e+06`, `4.29497e+09`).
fn show_bound(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exponent = x.abs().log10().floor() as i32;
    if (-4..6).contains(&exponent) {
        let text = format!("{:.*}", (5 - exponent).max(0) as usize, x);
        let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
        return text;
    }
    let text = format!("{:.5e}", x);
    let (mantissa, power) = text.split_once('e').expect("an exponent");
    let mantissa = if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
    exponent_form(format!("{mantissa}e{power}"))
}

/// Rust's `1.5e38` as Python's `1.5e+38` (a sign, and at least two digits of exponent).
fn exponent_form(text: String) -> String {
    let (mantissa, power) = text.split_once('e').expect("an exponent");
    let (sign, digits) = power.strip_prefix('-').map_or(("+", power), |d| ("-", d));
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// `value` as the real MCTS setting `name`, checked against its `MCTS_LIMITS` range, as given
/// and as stored (a float32: `5e-324` is 0 there).
pub fn check_real(name: &'static str, value: f64) -> Result<f32, SettingsError> {
    let l = mcts_limit(name).expect("a setting of MCTS_LIMITS");
    let within = |x: f64| x.is_finite() && (if l.low_open { x > l.low } else { x >= l.low }) && x <= l.high;
    let range = format!("{}{}, {}]", if l.low_open { "(" } else { "[" }, show_bound(l.low), show_bound(l.high));
    if !within(value) {
        return Err(SettingsError::new(
            name,
            format!("{name} must be a finite number in {range}, not {}", show_real(value)),
        ));
    }
    let stored = value as f32;
    if !within(stored.into()) {
        return Err(SettingsError::new(
            name,
            format!(
                "{name} must be a finite number in {range}, not {} (it is {} as a float32, as settings are stored)",
                show_real(value),
                show_real(stored.into())
            ),
        ));
    }
    Ok(stored)
}

/// `value` as the integer MCTS setting `name`, checked against its `MCTS_LIMITS` range.
pub fn check_integer(name: &'static str, value: i128) -> Result<u32, SettingsError> {
    let l = mcts_limit(name).expect("a setting of MCTS_LIMITS");
    if (value as f64) < l.low || (value as f64) > l.high {
        return Err(SettingsError::new(
            name,
            format!("{name} must be an integer in [{}, {}], not {value}", l.low as u64, l.high as u64),
        ));
    }
    Ok(value as u32)
}

/// Who plays (both sides alike).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Players {
    /// Uniformly random legal moves.
    Random,
    /// PUCT search with the heuristic evaluator (material and mobility from the rules).
    Mcts(MctsSettings),
}

impl Players {
    /// `"random"` or `"mcts"`, as the games table's `black_player` and `white_player` say.
    pub fn name(&self) -> &'static str {
        match self {
            Players::Random => "random",
            Players::Mcts(_) => "mcts",
        }
    }
}

/// The external (network) evaluator of a run, when MCTS is guided by one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkSettings {
    /// A label for the evaluator (its Python qualified name).
    pub name: String,
    /// Leaves each game adds to a batch per call (virtual loss spreads them over the tree).
    pub leaves_per_game: u32,
    /// What the evaluator sees: `"compact"` (piece ids) or `"onehot"` planes. Manifests written
    /// before the choice existed were one-hot.
    #[serde(default = "one_hot")]
    pub observation: String,
}

fn one_hot() -> String {
    "onehot".into()
}

/// A run's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Variant name, `"taikyoku"` by default.
    pub variant: String,
    /// Rule options; empty for the standard rules.
    pub options: Vec<String>,
    /// Random by default.
    pub players: Players,
    /// Games in the finished dataset, at least 1 (8 by default).
    pub games: u64,
    /// Master seed (0 by default); each game's seed derives from it and the game's id.
    pub seed: u64,
    /// Ply limit per game, at least 1 (5000 by default): a game still going after it is
    /// truncated (no result).
    pub max_plies: u32,
    /// Arrow by default.
    pub format: Format,
    /// Games per shard, at least 1; the last shard may hold fewer. `Settings::default()` and
    /// the Python and command-line front ends derive it from a target shard size in positions
    /// (`games_per_shard_for`) unless it is given.
    pub games_per_shard: u64,
    /// Whether the positions table holds each position's legal actions (`legal_actions`, a
    /// column that only exists when this is set). Absent from manifests when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub store_legal_actions: bool,
    /// Set when an external evaluator guides MCTS (instead of the heuristic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSettings>,
}

/// The default target size of a shard, in positions (rows of its positions file): about 2.5 MB
/// of Arrow for random play, 20-35 MB for MCTS (datasets/README.md §2).
pub const DEFAULT_SHARD_POSITIONS: u64 = 100_000;

/// Mean plies of a self-play game, by variant: `(variant, random players, heuristic MCTS)`,
/// measured with engine 0.1.0 without a ply limit (30,000 random plies, 5,000 MCTS plies; 64
/// simulations: more make MCTS games shorter in Taikyoku, longer in Tenjiku) over 16-64 games.
/// Only the shard layout depends on them, and only when `games_per_shard` is not given: a wrong
/// figure makes shards bigger or smaller than the target, never wrong.
/// Taishin: 32 random games (seeds 1-32) and 8 MCTS games (`max_plies` 3,000, none reached it).
const MEAN_PLIES: [(&str, u64, u64); 4] =
    [("taikyoku", 4_000, 30), ("tenjiku", 300, 150), ("daidai", 1_400, 1_000), ("taishin", 2_700, 1_200)];

impl Default for Settings {
    fn default() -> Self {
        let mut settings = Settings {
            variant: "taikyoku".into(),
            options: Vec::new(),
            players: Players::Random,
            games: 8,
            seed: 0,
            max_plies: 5000,
            format: Format::Arrow,
            games_per_shard: 1,
            store_legal_actions: false,
            network: None,
        };
        settings.games_per_shard = settings.games_per_shard_for(DEFAULT_SHARD_POSITIONS);
        settings
    }
}

impl Settings {
    /// Checks values a user can get wrong, including the MCTS and network settings; the error
    /// says which is wrong.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.games == 0 {
            return Err(SettingsError::new("games", String::from("games must be at least 1")));
        }
        if self.max_plies == 0 {
            return Err(SettingsError::new("max_plies", String::from("max_plies must be at least 1")));
        }
        if self.games_per_shard == 0 {
            return Err(SettingsError::new("games_per_shard", String::from("games_per_shard must be at least 1")));
        }
        if let Players::Mcts(mcts) = &self.players {
            mcts.validate()?;
        }
        if let Some(network) = &self.network {
            if self.players == Players::Random {
                return Err(SettingsError::new(
                    "players",
                    String::from("an evaluator guides MCTS: use players='mcts'"),
                ));
            }
            if network.leaves_per_game == 0 {
                return Err(SettingsError::new("leaves_per_game", String::from("leaves_per_game must be at least 1")));
            }
            if network.observation != "compact" && network.observation != "onehot" {
                return Err(SettingsError::new(
                    "observation",
                    format!("unknown observation '{}' (use 'compact' or 'onehot')", network.observation),
                ));
            }
        }
        Ok(())
    }

    /// The plies a game of these settings is expected to last, to size shards by: the variant's
    /// mean for these players (`MEAN_PLIES`), at most `max_plies`. A network evaluator may
    /// play anywhere from random-like (untrained) to strong, so it gets the larger of the two
    /// means; a variant without measured means gets `max_plies`, as if every game ran to the
    /// limit. Both err towards smaller shards: a shard too large costs memory (a shard's games
    /// are held until it is written) and parallelism, one too small only files.
    pub fn expected_plies(&self) -> u64 {
        let measured = MEAN_PLIES.iter().find(|(name, _, _)| *name == self.variant).map(|&(_, random, mcts)| {
            match (&self.players, &self.network) {
                (Players::Random, _) => random,
                (Players::Mcts(_), None) => mcts,
                (Players::Mcts(_), Some(_)) => random.max(mcts),
            }
        });
        let limit = u64::from(self.max_plies).max(1);
        measured.map_or(limit, |plies| plies.clamp(1, limit))
    }

    /// The `games_per_shard` that gives shards of about `positions` positions with these
    /// settings: `positions / expected_plies()`, rounded, at least 1 (and at most `u32::MAX`).
    /// It depends on the settings alone, never on the games played, so a shard's range of
    /// games is known before play (which resuming, verifying and runs on many machines need).
    pub fn games_per_shard_for(&self, positions: u64) -> u64 {
        let plies = self.expected_plies();
        (positions.saturating_add(plies / 2) / plies).clamp(1, u64::from(u32::MAX))
    }

    /// Whether the positions table holds the `policy` column: MCTS players with a Gumbel root.
    pub fn stores_policy(&self) -> bool {
        matches!(&self.players, Players::Mcts(m) if m.gumbel.is_some())
    }

    /// Shards in the finished dataset: `games / games_per_shard`, rounded up.
    pub fn shard_count(&self) -> u64 {
        self.games.div_ceil(self.games_per_shard)
    }

    /// The game ids of shard `index`.
    pub fn shard_games(&self, index: u64) -> std::ops::Range<u64> {
        let first = index.saturating_mul(self.games_per_shard).min(self.games);
        first..first.saturating_add(self.games_per_shard).min(self.games)
    }
}

/// A setting a user got wrong: which one, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    /// The setting's name (`games`, `c_puct`, `observation`...).
    pub field: &'static str,
    message: String,
}

impl SettingsError {
    fn new(field: &'static str, message: String) -> SettingsError {
        SettingsError { field, message }
    }
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SettingsError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcts() -> Players {
        Players::Mcts(MctsSettings::default())
    }

    #[test]
    fn shards_are_sized_from_the_players_expected_game_length() {
        // Random Taikyoku games last about 4,000 plies: 25 games make 100,000 positions.
        let random = Settings::default();
        assert_eq!((random.expected_plies(), random.games_per_shard), (4_000, 25));
        assert_eq!(random.games_per_shard_for(DEFAULT_SHARD_POSITIONS), 25);
        // MCTS games are short: many more games per shard, for shards of the same size.
        let heuristic = Settings { players: mcts(), max_plies: 1000, ..Settings::default() };
        assert_eq!(heuristic.expected_plies(), 30);
        assert_eq!(heuristic.games_per_shard_for(DEFAULT_SHARD_POSITIONS), 3_333);
        // The ply limit caps the expected length: 300-ply random games are all truncated.
        let short = Settings { max_plies: 300, ..Settings::default() };
        assert_eq!((short.expected_plies(), short.games_per_shard_for(100_000)), (300, 333));
        // A network evaluator is sized as the longer of random and heuristic play.
        let network = NetworkSettings { name: "net".into(), leaves_per_game: 8, observation: "compact".into() };
        let guided =
            Settings { players: mcts(), variant: "tenjiku".into(), network: Some(network), ..Settings::default() };
        assert_eq!(guided.expected_plies(), 300);
        // Another variant's figures; an unmeasured one plays to the limit (shards stay small).
        let daidai = Settings { players: mcts(), variant: "daidai".into(), ..Settings::default() };
        assert_eq!(daidai.expected_plies(), 1_000);
        let unknown = Settings { variant: "not-measured".into(), max_plies: 2_000, ..Settings::default() };
        assert_eq!((unknown.expected_plies(), unknown.games_per_shard_for(100_000)), (2_000, 50));
        // Rounded, at least one game, at most u32::MAX games.
        assert_eq!(random.games_per_shard_for(1), 1);
        assert_eq!(random.games_per_shard_for(6_000), 2);
        let one_ply = Settings { max_plies: 1, ..Settings::default() };
        assert_eq!(one_ply.games_per_shard_for(u64::MAX), u64::from(u32::MAX));
        // It depends on the settings, not on `games`: a larger run has the same shards.
        assert_eq!(Settings { games: 1_000_000, ..Settings::default() }.games_per_shard_for(100_000), 25);
    }

    #[test]
    fn mcts_limits_are_checked_and_name_the_value_given() {
        assert_eq!(check_real("c_puct", 1.5), Ok(1.5));
        let error = check_real("c_puct", 3e38).unwrap_err();
        assert_eq!(error.to_string(), "c_puct must be a finite number in (0, 1e+06], not 3e+38");
        assert_eq!(error.field, "c_puct");
        assert_eq!(
            check_real("dirichlet_alpha", 1001.0).unwrap_err().to_string(),
            "dirichlet_alpha must be a finite number in (0, 1000], not 1001.0"
        );
        assert!(check_real("dirichlet_alpha", 0.0).is_err() && check_real("dirichlet_fraction", 0.0).is_ok());
        assert!(check_real("temperature", f64::NAN).unwrap_err().to_string().ends_with("not nan"));
        // In range as given, out of it as stored: refused with the value given.
        assert_eq!(
            check_real("dirichlet_alpha", 5e-324).unwrap_err().to_string(),
            "dirichlet_alpha must be a finite number in (0, 1000], not 5e-324 (it is 0.0 as a float32, as settings are stored)"
        );
        assert_eq!(
            check_integer("gumbel_considered", 0).unwrap_err().to_string(),
            "gumbel_considered must be an integer in [1, 1048576], not 0"
        );
        assert_eq!(
            check_integer("simulations", 1 << 40).unwrap_err().to_string(),
            "simulations must be an integer in [1, 4294967295], not 1099511627776"
        );
        // Python's repr and format(x, "g"), as the Python side writes them.
        for (x, repr) in [
            (1.0, "1.0"),
            (0.25, "0.25"),
            (1e-5, "1e-05"),
            (123456.0, "123456.0"),
            (1e16, "1e+16"),
            (-2.5e-7, "-2.5e-07"),
        ] {
            assert_eq!(show_real(x), repr);
        }
        for (x, g) in
            [(0.0, "0"), (1.0, "1"), (1e3, "1000"), (1e6, "1e+06"), (4294967295.0, "4.29497e+09"), (0.5, "0.5")]
        {
            assert_eq!(show_bound(x), g);
        }
        // A manifest's settings are checked as strictly as arguments.
        let wrong = MctsSettings { temperature: 2e6, ..MctsSettings::default() };
        assert_eq!(wrong.validate().unwrap_err().field, "temperature");
    }

    #[test]
    fn manifests_without_new_fields_still_parse() {
        // A manifest's settings as schema version 2 wrote them: no store_legal_actions.
        let old = r#"{"variant":"taikyoku","options":[],"players":{"kind":"random"},"games":3,"seed":7,
            "max_plies":40,"format":"arrow","games_per_shard":16}"#;
        let settings: Settings = serde_json::from_str(old).unwrap();
        assert_eq!((settings.games_per_shard, settings.store_legal_actions), (16, false));
        // Written back, the default is left out: the same JSON as before.
        let text = serde_json::to_string(&settings).unwrap();
        assert!(!text.contains("store_legal_actions"), "{text}");
        let stored = Settings { store_legal_actions: true, ..settings };
        assert!(serde_json::to_string(&stored).unwrap().contains("\"store_legal_actions\":true"));
    }

    #[test]
    fn mcts_manifests_without_opponent_moves_counted_them_at_the_leaf() {
        use taikyoku_search::evaluation::OpponentMoves;
        let new = MctsSettings::default();
        assert_eq!(
            (new.opponent_moves.as_str(), new.heuristic_config().opponent_moves),
            ("parent", OpponentMoves::Parent)
        );
        // The settings as a manifest written before the setting holds them.
        let mut old = serde_json::to_value(&new).unwrap();
        old.as_object_mut().unwrap().remove("opponent_moves").unwrap();
        let old: MctsSettings = serde_json::from_value(old).unwrap();
        assert_eq!((old.opponent_moves.as_str(), old.heuristic_config().opponent_moves), ("leaf", OpponentMoves::Leaf));
        assert!(old.validate().is_ok());
        let wrong = MctsSettings { opponent_moves: "root".into(), ..new };
        let error = wrong.validate().unwrap_err();
        assert_eq!(error.field, "opponent_moves");
        assert!(error.to_string().contains("'root' (use 'parent' or 'leaf')"), "{error}");
    }
}
