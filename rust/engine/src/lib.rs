#![warn(missing_docs)]
//! # taikyoku-engine
//!
//! Rules engine for Taikyoku shogi (36×36, 402 pieces a side) and, next, its large-board
//! relatives. The rules are data: each variant is a piece table (`variants/*.pieces`, format in
//! docs/PIECE_TABLE.md) and a setup (`variants/*.setup`), read by one move generator.
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
pub use variant::{variant_names, Sources, Variant, VariantError};
