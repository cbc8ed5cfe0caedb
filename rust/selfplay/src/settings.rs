//! What a run generates. Everything here goes into the manifest and decides the output bytes;
//! the thread count does not.

use serde::{Deserialize, Serialize};
use taikyoku_search::evaluation::{HeuristicConfig, PriorMode};
use taikyoku_search::mcts::MctsConfig;

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
            ..MctsConfig::default()
        }
    }

    /// The evaluator settings: `priors` and `rollout_plies` from here, the rest
    /// `HeuristicConfig`'s defaults.
    pub fn heuristic_config(&self) -> HeuristicConfig {
        let defaults = HeuristicConfig::default();
        let priors = if self.priors == "uniform" { PriorMode::Uniform } else { defaults.priors };
        HeuristicConfig { priors, rollout_plies: self.rollout_plies, ..defaults }
    }

    /// Checks values a user can get wrong.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.simulations == 0 {
            return Err(SettingsError::new("simulations", String::from("simulations must be at least 1")));
        }
        if !(self.c_puct > 0.0 && self.c_puct.is_finite()) {
            return Err(SettingsError::new("c_puct", format!("c_puct must be positive, not {}", self.c_puct)));
        }
        if !(self.dirichlet_alpha > 0.0) || !(0.0..=1.0).contains(&self.dirichlet_fraction) {
            return Err(SettingsError::new("dirichlet_alpha", String::from("dirichlet_alpha must be positive and dirichlet_fraction in [0, 1]")));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(SettingsError::new("temperature", format!("temperature must be >= 0, not {}", self.temperature)));
        }
        if self.priors != "captures" && self.priors != "uniform" {
            return Err(SettingsError::new("priors", format!("unknown priors '{}' (use 'captures' or 'uniform')", self.priors)));
        }
        Ok(())
    }
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
    /// Games per shard, at least 1 (16 by default); the last shard may hold fewer.
    pub games_per_shard: u64,
    /// Set when an external evaluator guides MCTS (instead of the heuristic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSettings>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            variant: "taikyoku".into(),
            options: Vec::new(),
            players: Players::Random,
            games: 8,
            seed: 0,
            max_plies: 5000,
            format: Format::Arrow,
            games_per_shard: 16,
            network: None,
        }
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
                return Err(SettingsError::new("players", String::from("an evaluator guides MCTS: use players='mcts'")));
            }
            if network.leaves_per_game == 0 {
                return Err(SettingsError::new("leaves_per_game", String::from("leaves_per_game must be at least 1")));
            }
            if network.observation != "compact" && network.observation != "onehot" {
                return Err(SettingsError::new("observation", format!("unknown observation '{}' (use 'compact' or 'onehot')", network.observation)));
            }
        }
        Ok(())
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
