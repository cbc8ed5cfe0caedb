#![warn(missing_docs)]
//! # taikyoku-search
//!
//! Search, kept apart from the rules (as OpenSpiel keeps algorithms apart from games): the
//! engine never calls into this crate.
//!
//! - `evaluation`: the `Evaluator` trait a search asks of positions, and a heuristic evaluator
//!   whose piece values are derived from the move generator (nothing typed in per piece);
//! - `mcts`: PUCT Monte Carlo tree search with root noise, a temperature schedule, tree reuse, a
//!   Gumbel root (sequential halving) for small budgets,
//!   and a two-half API (`select_leaves` / `expand`) for batched evaluators such as networks;
//! - `opponent`: the environments' built-in opponents (random, heuristic MCTS).

pub mod evaluation;
pub mod mcts;
pub mod opponent;

pub use evaluation::{Evaluator, HeuristicConfig, HeuristicEvaluator, OpponentMoves, PieceValues, PriorMode};
pub use mcts::{search, LeafRequest, MctsConfig, MctsPlayer, RootRule, RootStats, Search};
pub use opponent::Opponent;
