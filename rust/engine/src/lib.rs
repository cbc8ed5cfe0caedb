#![warn(missing_docs)]
// The hot loops index several per-square or per-direction arrays by one index: iterators over
// one of them would hide that the index is the square or direction.
#![allow(clippy::needless_range_loop)]
//! # taikyoku-engine
//!
//! Rules engine for Taikyoku shogi (36×36, 402 pieces a side) and its large-board relatives.
//!
//! The built-in variants are `taikyoku`, `daidai`, `tenjiku` and `taishin` (`variant_names`).
//! The rules are data: each variant is three files read by one code path, a rules file (board,
//! promotion, end of game: `variants/*.rules`), a piece table (`variants/*.pieces`) and a setup
//! (`variants/*.setup`), formats in docs/PIECE_TABLE.md; one move generator reads every piece's
//! moves from its atoms. The rules as played, with their sources: docs/RULES.md.
//!
//! Modules (docs/ARCHITECTURE.md has the same table, and how a move travels through them):
//!
//! | module | role |
//! |---|---|
//! | `rules` | parses a rules file (defaults, line-numbered errors) |
//! | `table` | piece tables: the types the generator reads, the movement grammar (`table::grammar`), `PieceTable::parse` in named steps (`table::parse`); rule options |
//! | `variant` | loads the three files into a `Variant`; check mode (`Variant::check`) |
//! | `geometry` | colours, directions, square names, edge distances |
//! | `position` | the board, make/unmake, the incremental hash, the captures of a move |
//! | `movegen` | the one move generator (the reference), and `in_check` |
//! | `incremental` | the incremental move state (`MoveState`): every piece's moves kept up to date move by move, turned on by `Game::track_moves`; a folder of concepts, listed with the state's invariants in its module doc |
//! | `game` | a position with history and the end-of-game rules; the game's text |
//! | `notation` | the move grammar (print and parse) and the position text |
//! | `random` | seeded random playouts |
//! | `hash` | `splitmix64`, the mix of hash keys and derived seeds (a leaf) |
//! | `cache` (private) | `Caches`: the values the modules derive from a variant (the compiled table, the opening board, the types' dead ends), kept with it without the variant importing them (a leaf) |
//! | `rl` | the engine as RL spaces: the action space shared by all variants (`rl::actions`), observation planes (`rl::observation`), many games stepped together (`rl::vector`) |
//!
//! The modules import one another without a cycle (unit tests aside): the rules modules never
//! import `rl`, and `hash` and `cache` import nothing of the engine.
//!
//! ```
//! use taikyoku_engine::{Game, Variant};
//! let variant = Variant::load("taikyoku", &[]).unwrap();
//! let mut game = Game::new(variant);
//! let moves = game.legal_moves();
//! let first = moves[0];
//! game.play(first);
//! assert_eq!(game.plies(), 1);
//! ```

mod cache;
pub mod game;
pub mod geometry;
pub mod hash;
pub mod incremental;
pub mod movegen;
pub mod notation;
pub mod position;
pub mod random;
pub mod rl;
pub mod rules;
pub mod table;
pub mod variant;

pub use game::{Game, Outcome, ReplayError, Termination};
pub use geometry::{Color, Geometry};
pub use incremental::MoveState;
pub use notation::{NotationError, PositionTextError};
pub use position::{Burns, LastChange, Move, Piece, Position, NO_SQUARE};
pub use rl::actions::{Frame, NUM_ACTIONS};
pub use rules::{Rules, RulesOption};
pub use table::{Atom, Kind, PieceTable, PieceType, PlacementError, Trap};
pub use variant::{built_in_variant_names, variant_names, variant_sources, Sources, Variant, VariantError};
