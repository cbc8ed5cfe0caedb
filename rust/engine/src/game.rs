//! A game: a position plus the rules that end it (royal capture, repetition, perpetual check,
//! no moves, an optional ply limit).

use crate::geometry::Color;
use crate::incremental::MoveState;
use crate::notation::PositionTextError;
use crate::position::{Move, Position};
use crate::rules::{NoMoves, PerpetualCheck, RepetitionMode};
use crate::variant::Variant;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// Position hashes are already uniformly mixed 64-bit keys: hashing them again (SipHash) only
/// costs time, so the repetition table uses them as they are.
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed here; fold anything else in for completeness.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// Occurrences of each position hash.
type Occurrences = HashMap<u64, u32, BuildHasherDefault<PreHashed>>;

/// Which moves can make a position seen before (`Game::touched_since_irreversible`). Captures
/// and promotions are never undone, so only the positions since the last of them can recur;
/// a quiet move recreates one only if it leaves a square whose content changed since then for
/// another such square (the board then differs from the current one just there), or if it is
/// a pass (the same board).
struct Touched {
    /// Bits over squares: the start and end squares of the moves since the last capture or
    /// promotion.
    squares: Vec<u64>,
    /// Whether a pass would repeat a position.
    passes: bool,
}

impl Touched {
    #[inline]
    fn has(&self, sq: usize) -> bool {
        self.squares[sq / 64] & (1 << (sq % 64)) != 0
    }

    /// Whether `mv` needs the repetition test: false proves it does not repeat.
    #[inline]
    fn may_repeat(&self, mv: Move) -> bool {
        if mv.from == mv.to {
            self.passes
        } else {
            self.has(mv.from as usize) && self.has(mv.to as usize)
        }
    }

    /// The touched squares, in order.
    fn squares(&self) -> impl Iterator<Item = usize> + '_ {
        self.squares.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }
}

/// Bits in `Game::seen_bits` (a power of two: 8 KB).
const SEEN_BITS: usize = 1 << 16;
use std::sync::Arc;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// The winner captured the loser's last royal piece.
    RoyalCapture,
    /// The same position occurred a fourth time with the same side to move: no contest.
    Repetition,
    /// The repetition was reached by one side checking the other's sole royal with every move of
    /// the cycle: the checking side loses.
    PerpetualCheck,
    /// The side to move has no legal move and loses.
    NoMoves,
    /// The optional ply limit was reached (truncated: no result).
    MaxPlies,
    /// The side to move made an illegal move and lost (used by the environments).
    IllegalMove,
}

impl Termination {
    /// The termination as datasets and the Python API write it (`"royal_capture"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Termination::RoyalCapture => "royal_capture",
            Termination::Repetition => "repetition",
            Termination::PerpetualCheck => "perpetual_check",
            Termination::NoMoves => "no_moves",
            Termination::MaxPlies => "max_plies",
            Termination::IllegalMove => "illegal_move",
        }
    }
}

/// The outcome of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// This side won.
    Win(Color),
    /// No contest: a repetition, or no legal move under the `no-moves draw` rule.
    Draw,
    /// Stopped by the ply limit: no result.
    Truncated,
}

impl Outcome {
    /// The outcome for `side`: 1 a win, -1 a loss, 0 a draw or no result. The one definition of
    /// rewards, search values and the datasets' `outcome` column.
    pub fn value_for(self, side: Color) -> i8 {
        match self {
            Outcome::Win(winner) if winner == side => 1,
            Outcome::Win(_) => -1,
            Outcome::Draw | Outcome::Truncated => 0,
        }
    }

    /// The result as written in datasets and the Python API: `"black"`, `"white"`, `"draw"`,
    /// or `None` for a game stopped by the ply limit.
    pub fn result_name(self) -> Option<&'static str> {
        match self {
            Outcome::Win(winner) => Some(winner.name()),
            Outcome::Draw => Some("draw"),
            Outcome::Truncated => None,
        }
    }
}

/// A position plus what decides the end: repetition counts and the end reached after each ply.
#[derive(Clone, Debug)]
pub struct Game {
    /// The current position. Play moves with `Game::play`, not `Position::make`, so the
    /// repetition and end bookkeeping stays in step; call `reset_history` after editing it.
    pub position: Position,
    /// Occurrences of each position hash since the start (hash covers the side to move).
    seen: Occurrences,
    /// Hash after each ply, `hashes[0]` the start.
    hashes: Vec<u64>,
    /// The end reached after each ply (`None` while the game goes on).
    ends: Vec<Option<(Outcome, Termination)>>,
    /// Ply limit: the game ends truncated once `plies()` reaches it (`None`: no limit).
    pub max_plies: Option<u32>,
    /// Every piece's moves, kept in step with `position` by `play` and `undo` once
    /// `track_moves` asked for it (issue 13). Read only while it describes `position`
    /// (`MoveState::is_synced`), so editing the position directly falls back to full
    /// generation until the next `play` rebuilds it.
    moves: Option<Box<MoveState>>,
    /// Whether `play` and `undo` keep `moves` (`track_moves`).
    tracking: bool,
    /// Under `repetition-mode forbid`: a bit per position hash seen (its top 16 bits), never
    /// cleared by `undo`, so a clear bit proves a hash was not seen and the repetition test of
    /// most moves skips the occurrence table. Empty otherwise.
    seen_bits: Vec<u64>,
    /// Under `repetition-mode forbid`, per ply as `hashes`: how many moves in a row up to it
    /// were quiet (no capture, promotion or burn), so only positions since then can recur.
    quiet_run: Vec<u32>,
    /// Plies of history read with the start position (`from_text`'s `moves`): the rules see
    /// them (repetitions, Dai dai's forbidden positions, perpetual check), but they are not
    /// plies of this game (`plies`, `undo`, `history_notations` and the ply limit leave them out).
    base: usize,
}

impl Game {
    /// A game from the variant's initial position, with no ply limit.
    pub fn new(variant: Arc<Variant>) -> Game {
        Game::from_position(Position::initial(variant))
    }

    /// A game starting from `position` (its history is dropped).
    pub fn from_position(mut position: Position) -> Game {
        position.clear_history();
        let hash = position.hash();
        let mut seen = Occurrences::default();
        seen.insert(hash, 1);
        let forbid = position.variant.rules.repetition.mode == RepetitionMode::Forbid;
        let seen_bits = if forbid { vec![0; SEEN_BITS / 64] } else { Vec::new() };
        let mut game = Game {
            position,
            seen,
            hashes: vec![hash],
            ends: vec![None],
            max_plies: None,
            moves: None,
            tracking: false,
            seen_bits,
            quiet_run: vec![0],
            base: 0,
        };
        game.note_seen(hash);
        game
    }

    /// Restarts the game's bookkeeping from the current position (after board edits).
    pub fn reset_history(&mut self) {
        let placeholder = Position::empty(self.position.variant.clone(), Color::Black);
        let position = std::mem::replace(&mut self.position, placeholder);
        let (max_plies, tracking) = (self.max_plies, self.tracking);
        *self = Game::from_position(position);
        self.max_plies = max_plies;
        if tracking {
            self.track_moves(true);
        }
    }

    /// The side to move in the current position.
    pub fn side_to_move(&self) -> Color {
        self.position.side_to_move()
    }

    /// Plies played in this game (the history read with its start position not counted).
    pub fn plies(&self) -> usize {
        self.hashes.len() - 1 - self.base
    }

    /// The moves played in this game, oldest first (`plies()` of them).
    pub fn moves(&self) -> impl DoubleEndedIterator<Item = Move> + ExactSizeIterator + '_ {
        self.position.moves_played().skip(self.base)
    }

    /// The game as a text `from_text` reads back exactly: the position text (docs/RULES.md §7)
    /// of the position after the last irreversible move (a capture, a promotion, a burn; the
    /// start when there is none), then `moves` and the moves played since, in notation
    /// (`... b 12 moves P-12h p-13x`). Positions before an irreversible move can never recur,
    /// so the text carries everything the history rules read: repetition counts, Dai dai's
    /// forbidden repetitions, perpetual check. A game won by capturing the last royal starts
    /// before that capture, so that it ends the same way. With no move to give, it is the
    /// position text alone. The ply limit and a forfeit (`forfeit`) are not part of the text.
    pub fn to_text(&self) -> String {
        let won_by_capture = matches!(self.ends.last(), Some(Some((_, Termination::RoyalCapture))));
        let mut start = self.position.clone();
        let mut moves = Vec::new();
        while let Some(mv) = start.unmake() {
            if start.quiet_hash_after(mv).is_none() {
                if won_by_capture && moves.is_empty() {
                    moves.push(start.move_notation(mv));
                } else {
                    start.make(mv);
                }
                break;
            }
            moves.push(start.move_notation(mv));
        }
        let mut text = start.to_text();
        if !moves.is_empty() {
            moves.reverse();
            text.push_str(" moves ");
            text.push_str(&moves.join(" "));
        }
        text
    }

    /// The text this game started from (`to_text` as it stood before its first move): with the
    /// moves played since, what restores it (`Game::replay`, pickling).
    pub fn start_text(&self) -> String {
        let mut start = self.clone();
        start.tracking = false;
        start.moves = None;
        while start.undo().is_some() {}
        start.to_text()
    }

    /// A game from a text written by `to_text`, or any position text followed by `moves` and
    /// moves in notation (the USI idiom): the position, then the moves replayed, each checked
    /// legal, as history the rules see (`base`). The game's own plies start after them.
    pub fn from_text(variant: Arc<Variant>, text: &str) -> Result<Game, PositionTextError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let split = fields.iter().position(|&f| f == "moves").unwrap_or(fields.len());
        let position = Position::from_text(variant, &fields[..split].join(" "))?;
        let mut game = Game::from_position(position);
        for (i, &written) in fields.iter().skip(split + 1).enumerate() {
            let refuse =
                |reason: String| PositionTextError::Move { number: i + 1, written: written.to_string(), reason };
            if let Some((_, termination)) = game.end() {
                return Err(refuse(format!("the game is over ({})", termination.name())));
            }
            let mv = game.position.parse_move(written).map_err(|e| refuse(e.to_string()))?;
            if !game.is_legal(mv) {
                return Err(refuse("it would repeat a position, which the rules forbid".into()));
            }
            game.play(mv);
        }
        game.base = game.hashes.len() - 1;
        Ok(game)
    }

    /// The end recorded so far: royal capture, repetition, perpetual check, forfeit (found
    /// when a move is made) and the ply limit, but not "no legal move" (that needs a
    /// generation: see `end` and `end_given`). Costs nothing.
    pub fn recorded_end(&self) -> Option<(Outcome, Termination)> {
        if let Some(end) = *self.ends.last().expect("ends is never empty") {
            return Some(end);
        }
        if let Some(limit) = self.max_plies {
            if self.plies() >= limit as usize {
                return Some((Outcome::Truncated, Termination::MaxPlies));
            }
        }
        None
    }

    /// The end, given the legal moves of the side to move (already generated by the caller).
    pub fn end_given(&self, legal: &[Move]) -> Option<(Outcome, Termination)> {
        self.recorded_end().or_else(|| legal.is_empty().then(|| self.no_moves_outcome()))
    }

    /// The end of the game, if it is over: every rule, "no legal move" included (found by
    /// looking for one legal move, not by generating them all).
    pub fn end(&self) -> Option<(Outcome, Termination)> {
        self.recorded_end().or_else(|| (!self.has_legal_move()).then(|| self.no_moves_outcome()))
    }

    /// The legal moves of the side to move, appended to `out`: the position's moves, less
    /// those the repetition rule forbids (`repetition-mode forbid`). Everything that needs the
    /// legal moves of a game (environments, search, self-play) asks here.
    pub fn generate(&self, out: &mut Vec<Move>) {
        let start = out.len();
        match self.move_state() {
            Some(state) => state.moves(&self.position, self.side_to_move(), out),
            None => self.position.generate(self.side_to_move(), out),
        }
        self.drop_repeats(out, start);
    }

    /// Drops the moves from `start` on that the repetition rule forbids, if the variant has one.
    fn drop_repeats(&self, out: &mut Vec<Move>, start: usize) {
        if self.forbids_repetition() {
            let touched = self.touched_since_irreversible();
            let mut kept = start;
            let mut hashes = None;
            for i in start..out.len() {
                let mv = out[i];
                if !touched.may_repeat(mv) {
                    out[kept] = mv;
                    kept += 1;
                    continue;
                }
                let hashes = match &hashes {
                    Some((from, h)) if *from == mv.from => h,
                    _ => &hashes.insert((mv.from, self.position.quiet_hashes(mv.from as usize))).1,
                };
                if !self.repeats_hash(hashes.after(&self.position, mv)) {
                    out[kept] = mv;
                    kept += 1;
                }
            }
            out.truncate(kept);
        }
    }

    /// The legal moves of the side to move (see `generate`).
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(2048);
        self.generate(&mut out);
        out
    }

    /// The moves of the piece on `sq` (see `Position::generate_from`); for a piece of the side
    /// to move, only the legal ones (the history rules of `generate` applied).
    pub fn generate_from(&self, sq: usize, out: &mut Vec<Move>) {
        let start = out.len();
        self.position.generate_from(sq, out);
        if self.position.at(sq).is_some_and(|p| p.color == self.side_to_move()) {
            self.drop_repeats(out, start);
        }
    }

    /// Keeps every piece's moves up to date move by move (`incremental::MoveState`), or stops.
    ///
    /// Worth it where every position's moves are read, as in random play (`random_playout`
    /// turns it on): a ply then costs a fraction of a full generation, and `legal_moves`,
    /// `legal_move_count`, `legal_move` and `choose_move` read the state. Not worth it where
    /// moves are made and taken back far more often than generated (tree search): keeping the
    /// state costs microseconds per move on the big boards, against tens of nanoseconds for
    /// `Position::make` alone. Off by default.
    pub fn track_moves(&mut self, on: bool) {
        self.tracking = on;
        self.moves = on.then(|| Box::new(MoveState::new(&self.position)));
    }

    /// Runs `f` with the incremental move state set aside (tree search makes and takes back
    /// many moves and reads few lists, so keeping the state would cost more than it saves).
    /// The state comes back afterwards; if `f` left the game elsewhere, it is brought up to
    /// date on the next move.
    pub fn without_tracking<R>(&mut self, f: impl FnOnce(&mut Game) -> R) -> R {
        if !self.tracking {
            return f(self);
        }
        let state = self.moves.take();
        self.tracking = false;
        let result = f(self);
        self.tracking = true;
        self.moves = state;
        result
    }

    /// The incremental move state, when it describes the current position.
    pub fn move_state(&self) -> Option<&MoveState> {
        self.moves.as_deref().filter(|state| state.is_synced(&self.position))
    }

    /// How many legal moves the side to move has (`legal_moves().len()`, without building the
    /// list where the incremental state can count them).
    pub fn legal_move_count(&self) -> usize {
        match self.move_state() {
            Some(state) if !self.forbids_repetition() => state.count(self.side_to_move()),
            _ => self.legal_moves().len(),
        }
    }

    /// `legal_moves()[index]`, without building the list where the incremental state can
    /// find it. Panics if `index` is not below `legal_move_count()`.
    pub fn legal_move(&self, index: usize) -> Move {
        match self.move_state() {
            Some(state) if !self.forbids_repetition() => state.nth(&self.position, self.side_to_move(), index),
            _ => self.legal_moves()[index],
        }
    }

    /// `legal[choose(legal.len())]` for the legal moves `legal`, or `None` when there are
    /// none: a uniformly random move is `choose_move(|n| rng.gen_range(0..n), ...)`, the same
    /// move for the same random stream as picking from `legal_moves()`. `scratch` holds the
    /// list where it has to be built (history rules).
    pub fn choose_move(&self, choose: impl FnOnce(usize) -> usize, scratch: &mut Vec<Move>) -> Option<Move> {
        match self.move_state() {
            Some(state) if !self.forbids_repetition() => {
                let n = state.count(self.side_to_move());
                (n > 0).then(|| state.nth(&self.position, self.side_to_move(), choose(n)))
            }
            Some(state) => {
                // Only the few moves that repeat are dropped: note their places in the
                // state's order and skip them, without building the list.
                let side = self.side_to_move();
                let mut skipped = Vec::new();
                let touched = self.touched_since_irreversible();
                let mut test = |sq: usize, mut index: usize| {
                    let hashes = self.position.quiet_hashes(sq);
                    state.for_each_move_from(&self.position, sq, |mv| {
                        if touched.may_repeat(mv) && self.repeats_hash(hashes.after(&self.position, mv)) {
                            skipped.push(index);
                        }
                        index += 1;
                    });
                };
                if touched.passes {
                    // Every piece that can pass may repeat: test them all.
                    let mut index = 0;
                    for sq in self.position.squares_of(side) {
                        test(sq, index);
                        index += state.moves_on(sq);
                    }
                } else {
                    for sq in touched.squares().filter(|&sq| self.position.at(sq).is_some_and(|p| p.color == side)) {
                        test(sq, state.first_index(side, sq));
                    }
                }
                let n = state.count(side) - skipped.len();
                if n == 0 {
                    return None;
                }
                let mut pick = choose(n);
                for &at in &skipped {
                    if at <= pick {
                        pick += 1;
                    }
                }
                Some(state.nth(&self.position, side, pick))
            }
            None => {
                scratch.clear();
                self.generate(scratch);
                (!scratch.is_empty()).then(|| scratch[choose(scratch.len())])
            }
        }
    }

    /// `position.move_notation(mv)` for a move of the side to move, reading the other pieces
    /// written with the same sign, and their moves, from the incremental state where it is kept
    /// (self-play records every move's notation: generating the moves of every piece with the
    /// same sign cost most of it, then finding those pieces).
    pub fn move_notation(&self, mv: Move) -> String {
        match self.move_state() {
            Some(state) if state.is_settled(self.side_to_move()) => {
                let mut rivals = Vec::new();
                state.moves_of_sign(&self.position, mv.from as usize, &mut rivals);
                self.position.move_notation_among(mv, &rivals)
            }
            _ => self.position.move_notation(mv),
        }
    }

    /// Whether `mv` is legal for the side to move (see `generate`).
    pub fn is_legal(&self, mv: Move) -> bool {
        self.position.is_legal(mv) && !(self.forbids_repetition() && self.repeats(mv))
    }

    /// Whether the side to move has a legal move (see `generate`).
    pub fn has_legal_move(&self) -> bool {
        if !self.forbids_repetition() {
            return match self.move_state() {
                Some(state) => state.count(self.side_to_move()) > 0,
                None => self.position.has_legal_move(),
            };
        }
        self.position.has_move_where(|mv| !self.repeats(mv))
    }

    /// Sets `hash`'s bit in `seen_bits` (under `repetition-mode forbid`).
    #[inline]
    fn note_seen(&mut self, hash: u64) {
        if !self.seen_bits.is_empty() {
            let bit = (hash >> (64 - SEEN_BITS.trailing_zeros())) as usize;
            self.seen_bits[bit / 64] |= 1 << (bit % 64);
        }
    }

    /// Whether `hash` may have been seen: false proves it was not (`seen_bits`).
    #[inline]
    fn maybe_seen(&self, hash: u64) -> bool {
        let bit = (hash >> (64 - SEEN_BITS.trailing_zeros())) as usize;
        self.seen_bits.get(bit / 64).is_none_or(|word| word & (1 << (bit % 64)) != 0)
    }

    fn forbids_repetition(&self) -> bool {
        self.position.variant.rules.repetition.mode == RepetitionMode::Forbid
    }

    /// Whether `mv` would make the position occur for the rule's counted time. Only a quiet
    /// move can (captures, promotions and burns never come back).
    fn repeats(&self, mv: Move) -> bool {
        self.repeats_hash(self.position.quiet_hash_after(mv))
    }

    /// What can repeat (`Touched`): the squares the moves since the last capture or promotion
    /// went from or to.
    fn touched_since_irreversible(&self) -> Touched {
        let run = *self.quiet_run.last().expect("a run per ply") as usize;
        let mut squares = vec![0u64; self.position.variant.geometry.size().div_ceil(64)];
        for mv in self.position.moves_played().rev().take(run) {
            for sq in [mv.from as usize, mv.to as usize] {
                squares[sq / 64] |= 1 << (sq % 64);
            }
        }
        // Every pass gives the same position: one test tells whether passes may repeat.
        let passes =
            self.position.squares_of(self.side_to_move()).next().is_some_and(|sq| self.repeats(Move::new(sq, sq)));
        Touched { squares, passes }
    }

    /// Whether a move with this `quiet_hash_after` would make the rule's counted occurrence.
    #[inline]
    fn repeats_hash(&self, quiet_hash: Option<u64>) -> bool {
        let limit = self.position.variant.rules.repetition.count;
        quiet_hash.is_some_and(|hash| self.maybe_seen(hash) && self.seen.get(&hash).is_some_and(|&n| n + 1 >= limit))
    }

    /// The end when the side to move has no legal move (the variant's `no-moves` rule).
    fn no_moves_outcome(&self) -> (Outcome, Termination) {
        match self.position.variant.rules.no_moves {
            NoMoves::Loses => (Outcome::Win(self.side_to_move().opponent()), Termination::NoMoves),
            NoMoves::Draw => (Outcome::Draw, Termination::NoMoves),
        }
    }

    /// How many times the current position has occurred (1 the first time).
    pub fn repetitions(&self) -> u32 {
        self.seen.get(&self.position.hash()).copied().unwrap_or(0)
    }

    /// Plays a move assumed legal; finds royal capture, repetition and perpetual check.
    pub fn play(&mut self, mv: Move) {
        let mover = self.side_to_move();
        let opponent = mover.opponent();
        let royals_before = self.position.royal_count(opponent);
        let own_royals_before = self.position.royal_count(mover);
        let synced = self.move_state().is_some();
        let run = match self.forbids_repetition() && self.position.quiet_hash_after(mv).is_some() {
            true => self.quiet_run.last().expect("a run per ply") + 1,
            false => 0,
        };
        self.quiet_run.push(run);
        self.position.make(mv);
        if self.tracking {
            match self.moves.as_deref_mut() {
                Some(state) if synced => state.follow_make(&self.position),
                Some(state) => state.rebuild(&self.position),
                None => self.moves = Some(Box::new(MoveState::new(&self.position))),
            }
        }
        let hash = self.position.hash();
        self.note_seen(hash);
        self.hashes.push(hash);
        let count = self.seen.entry(hash).or_insert(0);
        *count += 1;
        let count = *count;
        let end = if royals_before > 0 && self.position.royal_count(opponent) == 0 {
            Some((Outcome::Win(mover), Termination::RoyalCapture))
        } else if own_royals_before > 0 && self.position.royal_count(mover) == 0 {
            // Its last royal stopped next to an enemy fire demon and burned.
            Some((Outcome::Win(opponent), Termination::RoyalCapture))
        } else if count >= self.position.variant.rules.repetition.count && !self.forbids_repetition() {
            Some(self.repetition_outcome())
        } else {
            None
        };
        self.ends.push(end);
    }

    /// Takes back the last move; `None` if there is none.
    pub fn undo(&mut self) -> Option<Move> {
        if self.hashes.len() <= 1 + self.base {
            return None;
        }
        let synced = self.move_state().is_some();
        if let (Some(state), true) = (self.moves.as_deref_mut(), synced) {
            state.prepare_unmake(&self.position);
        }
        let mv = self.position.unmake()?;
        match self.moves.as_deref_mut() {
            Some(state) if synced => state.follow_unmake(&self.position),
            Some(state) => state.rebuild(&self.position),
            None => {}
        }
        let hash = self.hashes.pop().expect("hash per ply");
        self.quiet_run.pop();
        if let Some(count) = self.seen.get_mut(&hash) {
            *count -= 1;
            if *count == 0 {
                self.seen.remove(&hash);
            }
        }
        self.ends.pop();
        Some(mv)
    }

    /// Decides a fourth repetition: perpetual check by one side loses, anything else is no contest.
    ///
    /// The cycle runs from the first occurrence of the current position to now. A side gave
    /// perpetual check if, after each of its moves in the cycle, the opponent had exactly one
    /// royal and that royal could be captured by the side's next move.
    fn repetition_outcome(&self) -> (Outcome, Termination) {
        if self.position.variant.rules.perpetual_check == PerpetualCheck::Repetition {
            return (Outcome::Draw, Termination::Repetition);
        }
        let hash = self.position.hash();
        let first = self.hashes.iter().position(|&h| h == hash).expect("current hash is recorded");
        let cycle = self.hashes.len() - 1 - first;
        let mut replay = self.position.clone();
        let mut checks_all = [true, true];
        for _ in 0..cycle {
            // `replay` is the position after a move by `replay.side_to_move().opponent()`.
            let checker = replay.side_to_move().opponent();
            let checked = replay.side_to_move();
            let gives_check = replay.in_check(checked);
            checks_all[checker.index()] &= gives_check;
            replay.unmake();
        }
        match (checks_all[0], checks_all[1]) {
            (true, false) => (Outcome::Win(Color::White), Termination::PerpetualCheck),
            (false, true) => (Outcome::Win(Color::Black), Termination::PerpetualCheck),
            _ => (Outcome::Draw, Termination::Repetition),
        }
    }

    /// Whether the game was lost by an illegal move (`forfeit`).
    pub fn forfeited(&self) -> bool {
        matches!(self.ends.last(), Some(Some((_, Termination::IllegalMove))))
    }

    /// The notation of every move played, oldest first (each written in the position it was
    /// played from).
    pub fn history_notations(&self) -> Vec<String> {
        let mut replay = self.position.clone();
        let mut out = Vec::with_capacity(self.plies());
        for _ in 0..self.plies() {
            let mv = replay.unmake().expect("a move per ply");
            out.push(replay.move_notation(mv));
        }
        out.reverse();
        out
    }

    /// Replays `moves` from `start` (a text of `to_text`, or `start_text`), checking each is
    /// legal and the game not over: how pickled games come back. Errors name the first bad move.
    pub fn replay(
        variant: Arc<Variant>,
        start: &str,
        moves: &[Move],
        max_plies: Option<u32>,
    ) -> Result<Game, ReplayError> {
        let mut game = Game::from_text(variant, start).map_err(ReplayError::Start)?;
        for (i, &mv) in moves.iter().enumerate() {
            if let Some((_, termination)) = game.end() {
                return Err(ReplayError::AfterEnd { number: i + 1, termination });
            }
            if !game.is_legal(mv) {
                return Err(ReplayError::Illegal { number: i + 1, mv });
            }
            game.play(mv);
        }
        game.max_plies = max_plies;
        Ok(game)
    }

    /// Marks the game lost by the side to move for an illegal move (environment rule).
    pub fn forfeit(&mut self) {
        let loser = self.side_to_move();
        *self.ends.last_mut().expect("ends is never empty") =
            Some((Outcome::Win(loser.opponent()), Termination::IllegalMove));
    }
}

/// Why `Game::replay` refused a game. Moves count from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayError {
    /// The start position's text is invalid.
    Start(PositionTextError),
    /// A move comes after the game ended.
    AfterEnd {
        /// Which move.
        number: usize,
        /// How the game had ended.
        termination: Termination,
    },
    /// A move is not legal in its position.
    Illegal {
        /// Which move.
        number: usize,
        /// The move.
        mv: Move,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Start(e) => write!(f, "bad start position: {e}"),
            Self::AfterEnd { number, termination } => {
                write!(f, "move {number} comes after the end of the game ({})", termination.name())
            }
            Self::Illegal { number, mv } => write!(f, "move {number} ({mv:?}) is not legal in its position"),
        }
    }
}

impl std::error::Error for ReplayError {}
