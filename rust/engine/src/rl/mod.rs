//! The engine as reinforcement-learning spaces, in one place: every variant's moves as integers
//! of one action space (`actions`), positions as 36×36×P tensors (`observation`), and many games
//! stepped together by action (`vector`). The rules modules never import from here.

pub mod actions;
pub mod observation;
pub mod vector;
