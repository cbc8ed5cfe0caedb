//! The moves of single pieces on small boards: lines, hops, rank lines, lion powers, teleport,
//! promotion offers, the pass limit and trapped pieces. The fast paths: `fast_paths`.

mod fast_paths;

use crate::geometry::Color;
use crate::position::{Move, Piece, Position, NO_SQUARE};
use crate::variant::Variant;

/// An empty Taikyoku board with the given pieces: (square, key, colour).
fn board(pieces: &[(&str, &str, Color)]) -> Position {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut pos = Position::empty(variant.clone(), Color::Black);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        let sq = variant.geometry.parse_square(sq).unwrap();
        pos.put(sq, Piece { kind, origin: kind, color, promoted: false });
    }
    pos
}

fn moves(pos: &Position, sq: &str) -> Vec<Move> {
    let mut out = Vec::new();
    pos.generate_from(pos.variant.geometry.parse_square(sq).unwrap(), &mut out);
    out
}

fn targets(pos: &Position, sq: &str) -> Vec<String> {
    let mut t: Vec<String> = moves(pos, sq).iter().map(|m| pos.variant.geometry.square_name(m.to as usize)).collect();
    t.sort();
    t
}

/// A Dai dai board (17×17) with the given pieces.
fn daidai(pieces: &[(&str, &str, Color)]) -> Position {
    let variant = Variant::load("daidai", &[]).unwrap();
    let mut pos = Position::empty(variant.clone(), Color::Black);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
    }
    pos
}

#[test]
fn lion_line_captures_on_every_step_of_the_line() {
    use Color::*;
    // The worked example of `lionline(D,n,n)` (docs/PIECE_TABLE.md): a black lion dog on 9i, white
    // pawns on 9h, 9g and 9f. Each forward move as (end, captured squares in order).
    let pos = daidai(&[("9i", "Lion dog", Black), ("9h", "P", White), ("9g", "P", White), ("9f", "P", White)]);
    let list = moves(&pos, "9i");
    let name = |sq: usize| pos.variant.geometry.square_name(sq);
    let mut forward: Vec<(String, Vec<String>)> = list
        .iter()
        .filter(|m| pos.captures_of(**m).iter().any(|&sq| ["9h", "9g", "9f"].contains(&name(sq).as_str())))
        .map(|&m| (name(m.to as usize), pos.captures_of(m).into_iter().map(name).collect()))
        .collect();
    forward.sort();
    let expected = [
        ("9f", vec!["9f"]),             // jump to the third square
        ("9f", vec!["9g", "9f"]),       // jump to the second, capture, step on
        ("9f", vec!["9h", "9g", "9f"]), // three steps, three captures
        ("9g", vec!["9g"]),             // jump to the second square
        ("9g", vec!["9h", "9g"]),       // two steps
        ("9h", vec!["9g", "9h"]),       // out two, back one
        ("9h", vec!["9h"]),             // a step
        ("9i", vec!["9h"]),             // igui
    ];
    let expected: Vec<(String, Vec<String>)> =
        expected.iter().map(|(to, c)| (to.to_string(), c.iter().map(|s| s.to_string()).collect())).collect();
    assert_eq!(forward, expected);
    // The other seven directions are empty: three plain moves each, and one pass.
    assert_eq!(list.len(), 8 + 21 + 1, "{list:?}");
    assert_eq!(list.iter().filter(|m| m.is_pass()).count(), 1);
    // A friend on the first square: no igui, no pass through it, no step, but the jumps.
    let pos = daidai(&[("9i", "Lion dog", Black), ("9h", "P", Black), ("9g", "P", White)]);
    let forward: Vec<Move> = moves(&pos, "9i")
        .into_iter()
        .filter(|m| {
            m.to != m.from && pos.variant.geometry.xy(m.to as usize).0 == pos.variant.geometry.xy(m.from as usize).0
        })
        .collect();
    let ends: Vec<String> =
        forward.iter().filter(|m| (m.to as usize) < (m.from as usize)).map(|m| name(m.to as usize)).collect();
    assert!(
        !ends.contains(&"9h".to_string()) && ends.contains(&"9g".to_string()) && ends.contains(&"9f".to_string()),
        "{ends:?}"
    );
}

/// A Taishin board (25×25) with the given pieces, `side` to move.
fn taishin(side: Color, pieces: &[(&str, &str, Color)]) -> Position {
    let variant = Variant::load("taishin", &[]).unwrap();
    let mut pos = Position::empty(variant.clone(), side);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        let piece = variant.table.placement(kind, false, color).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), piece);
    }
    pos
}

/// (end, captured squares) of each move, sorted.
fn effects(pos: &Position, list: &[Move]) -> Vec<(String, Vec<String>)> {
    let name = |sq: usize| pos.variant.geometry.square_name(sq);
    let mut out: Vec<(String, Vec<String>)> =
        list.iter().map(|&m| (name(m.to as usize), pos.captures_of(m).into_iter().map(name).collect())).collect();
    out.sort();
    out
}

fn owned(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    list.iter().map(|(to, c)| (to.to_string(), c.iter().map(|s| s.to_string()).collect())).collect()
}

#[test]
fn taishin_lion_dog_captures_at_most_twice() {
    use Color::*;
    // The same example for Taishin's `lionline(D,n)` (docs/PIECE_TABLE.md): white pawns on 9h, 9g, 9f.
    let pos = taishin(Black, &[("9i", "LD", Black), ("9h", "P", White), ("9g", "P", White), ("9f", "P", White)]);
    let list = moves(&pos, "9i");
    let forward: Vec<Move> = list.iter().copied().filter(|&m| pos.is_capture(m)).collect();
    assert_eq!(
        effects(&pos, &forward),
        owned(&[
            ("9f", &["9f"]),
            ("9f", &["9g", "9f"]),
            ("9f", &["9h", "9f"]), // take 9h, jump over 9g: the Dai dai version takes all three
            ("9g", &["9g"]),
            ("9g", &["9h", "9g"]),
            ("9h", &["9g", "9h"]),
            ("9h", &["9h"]),
            ("9i", &["9h"]),
        ])
    );
    assert_eq!(list.len(), 8 + 21 + 1, "{list:?}");
    // After capturing on the first square it may jump a friend on the second.
    let pos = taishin(Black, &[("9i", "LD", Black), ("9h", "P", White), ("9g", "P", Black)]);
    let ends = effects(&pos, &moves(&pos, "9i"));
    assert!(ends.contains(&("9f".to_string(), vec!["9h".to_string()])), "{ends:?}");
}

#[test]
fn range_jump_over_at_most_two_pieces() {
    use Color::*;
    // Gaps note §2.3: a black great general on 13m; file 13 ahead: 13k a black pawn, 13i,
    // 13h and 13g white pawns.
    let pos = taishin(
        Black,
        &[("13m", "GG", Black), ("13k", "P", Black), ("13i", "P", White), ("13h", "P", White), ("13g", "P", White)],
    );
    let file: Vec<String> =
        targets(&pos, "13m").into_iter().filter(|t| t.starts_with("13") && t.as_str() < "13m").collect();
    assert_eq!(file, ["13h", "13i", "13l"]);
}

#[test]
fn emperor_cannot_capture_a_protected_royal() {
    use Color::*;
    // Gaps note §2.4: a black emperor on 25y, a white king on 13b, a white pawn on 1a.
    let protected =
        taishin(Black, &[("25y", "Emperor", Black), ("13b", "K", White), ("13a", "G", White), ("1a", "P", White)]);
    let t = targets(&protected, "25y");
    assert!(t.contains(&"1a".to_string()) && t.contains(&"13a".to_string()) && !t.contains(&"13b".to_string()));
    // Every square but its own and the king's: 625 - 2.
    assert_eq!(t.len(), 623);
    // With the gold on 10a nothing protects the king: the emperor may take it.
    let open = taishin(Black, &[("25y", "Emperor", Black), ("13b", "K", White), ("10a", "G", White)]);
    assert!(targets(&open, "25y").contains(&"13b".to_string()));
    // The king is not in check from a protected position either.
    assert!(!protected.attacks(Black, protected.variant.geometry.parse_square("13b").unwrap()));
}

#[test]
fn capturing_a_deva_or_dark_spirit_confers_its_type() {
    use Color::*;
    let kind_after = |mover: &str, promoted: bool, victims: &[(&str, &str)], to: &str| {
        let variant = Variant::load("taishin", &[]).unwrap();
        let mut pieces = vec![("13m", mover, Black)];
        pieces.extend(victims.iter().map(|&(sq, key)| (sq, key, White)));
        let mut pos = taishin(Black, &pieces);
        if promoted {
            let kind = variant.table.lookup(mover).unwrap();
            pos.put(variant.geometry.parse_square("13m").unwrap(), variant.table.placement(kind, true, Black).unwrap());
        }
        let g = &pos.variant.geometry;
        let (to, mids): (usize, Vec<usize>) =
            (g.parse_square(to).unwrap(), victims.iter().map(|(sq, _)| g.parse_square(sq).unwrap()).collect());
        let mv = moves(&pos, "13m")
            .into_iter()
            .find(|&m| m.to as usize == to && pos.captures_of(m).len() == mids.len())
            .expect("the capture is legal");
        assert!(pos.promotes(mv));
        pos.make(mv);
        assert_eq!(pos.hash(), pos.compute_hash());
        let p = pos.at(to).unwrap();
        (pos.variant.table.get(p.kind).name.clone(), p.promoted)
    };
    // An unpromoted rook takes a deva: a teaching king, not a dragon king.
    assert_eq!(kind_after("R", false, &[("13l", "DV")], "13l"), ("Teaching king".into(), true));
    // A dragon king (a promoted rook) takes a dark spirit: a divine dragon.
    assert_eq!(kind_after("R", true, &[("13l", "DS")], "13l"), ("Divine dragon".into(), true));
    // A lion takes a deva, then a dark spirit: the second capture decides.
    assert_eq!(kind_after("LN", false, &[("13l", "DV"), ("13k", "DS")], "13k"), ("Divine dragon".into(), true));
    // A king promotes as usual; a drunk elephant (it promotes to a prince) too.
    assert_eq!(kind_after("K", false, &[("13l", "DV")], "13l"), ("Emperor".into(), true));
    assert_eq!(kind_after("DE", false, &[("13l", "DV")], "13l"), ("Prince".into(), true));
}

#[test]
fn pawn_may_decline_promotion_on_the_last_rank() {
    use Color::*;
    let pos = taishin(Black, &[("13b", "P", Black), ("5e", "K", White)]);
    let list = moves(&pos, "13b");
    assert_eq!(list.len(), 2);
    let written: Vec<String> = list.iter().map(|&m| pos.move_notation(m)).collect();
    assert_eq!(written, ["P-13a=", "P-13a+"]);
    for (mv, text) in list.iter().zip(&written) {
        assert_eq!(pos.parse_move(text), Ok(*mv));
    }
    assert!(pos.parse_move("P-13a").is_err(), "a bare move is ambiguous");
    // Declined, it stays a pawn with no moves; a capture there promotes, one move.
    let mut declined = pos.clone();
    declined.make(list[0]);
    assert!(moves(&declined, "13a").is_empty());
    let pos = taishin(Black, &[("13b", "P", Black), ("13a", "P", White)]);
    let list = moves(&pos, "13b");
    assert_eq!(list.len(), 1);
    assert!(pos.promotes(list[0]) && pos.move_notation(list[0]).ends_with('+'));
}

#[test]
fn a_fourth_pass_in_a_row_is_not_legal() {
    use Color::*;
    let mut pos = taishin(Black, &[("13m", "LN", Black), ("1a", "K", White), ("25y", "K", Black)]);
    let pass = |pos: &Position| pos.legal_moves().into_iter().find(|m| m.is_pass());
    for n in 1..=3u8 {
        let mv = pass(&pos).expect("a pass");
        pos.make(mv);
        assert_eq!(pos.consecutive_passes(Black), n);
        assert_eq!(pos.hash(), pos.compute_hash());
        let text = pos.to_text();
        assert!(text.ends_with(&format!("passes={n},0")), "{text}");
        let back = Position::from_text(pos.variant.clone(), &text).unwrap();
        assert_eq!((back.hash(), back.to_text()), (pos.hash(), text));
        let white = pos.legal_moves().into_iter().find(|m| !m.is_pass()).unwrap();
        pos.make(white);
    }
    assert!(pass(&pos).is_none(), "the fourth pass");
    // Any other move starts the count again.
    let king = pos.variant.geometry.parse_square("25y").unwrap() as u16;
    let step = pos.legal_moves().into_iter().find(|m| m.from == king).unwrap();
    pos.make(step);
    assert_eq!(pos.consecutive_passes(Black), 0);
    pos.unmake();
    assert_eq!(pos.consecutive_passes(Black), 3);
    // The same board without the counter is a different position.
    assert!(Position::from_text(
        pos.variant.clone(),
        "25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25 b 1 passes=4,0"
    )
    .is_err());
}

#[test]
fn slide_stops_before_a_friend_and_on_an_enemy() {
    use Color::*;
    // Lance on 18r: forward is towards rank a.
    let pos = board(&[("18r", "L", Black), ("18o", "P", Black)]);
    assert_eq!(targets(&pos, "18r"), ["18p", "18q"]);
    let pos = board(&[("18r", "L", Black), ("18o", "P", White)]);
    assert_eq!(targets(&pos, "18r"), ["18o", "18p", "18q"]);
    // White's lance goes the other way.
    let pos = board(&[("18r", "L", White), ("18u", "P", Black)]);
    assert_eq!(targets(&pos, "18r"), ["18s", "18t", "18u"]);
}

#[test]
fn no_duplicates_for_overlapping_atoms() {
    // Hook mover: every square of the board but its own, each once.
    let pos = board(&[("18r", "HM", Color::Black)]);
    let list = moves(&pos, "18r");
    assert_eq!(list.len(), 36 * 36 - 1);
    let mut unique = list.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), list.len());
}

#[test]
fn hop_passes_up_to_its_count() {
    use Color::*;
    // Teaching king: hop(all,3). Forward file 18: pieces on 18q, 18p, 18o, 18n.
    let pos = board(&[
        ("18r", "Teaching king", Black),
        ("18q", "P", Black),
        ("18p", "P", White),
        ("18o", "P", Black),
        ("18n", "P", White),
        ("18m", "P", White),
    ]);
    let t = targets(&pos, "18r");
    assert!(t.contains(&"18p".to_string()) && t.contains(&"18n".to_string()));
    assert!(!t.contains(&"18q".to_string()) && !t.contains(&"18o".to_string()));
    // After passing three pieces it may take the fourth but not pass it.
    assert!(!t.contains(&"18m".to_string()));
}

#[test]
fn range_capture_respects_ranks() {
    use Color::*;
    // Great general (rank 1) flies over a vice general (rank 2), not over a king.
    let pos = board(&[("18r", "GG", Black), ("18p", "VG", White), ("18n", "P", Black), ("18k", "K", White)]);
    let list = moves(&pos, "18r");
    let to = |name: &str| pos.variant.geometry.parse_square(name).unwrap() as u16;
    let take_king = list.iter().find(|m| m.to == to("18k")).expect("captures the king by landing");
    assert!(take_king.sweep());
    assert_eq!(pos.captures_of(*take_king).len(), 3);
    assert!(!list.iter().any(|m| m.to == to("18j")));
    // A vice general may not fly over a great general.
    let pos = board(&[("18r", "VG", Black), ("17q", "GG", White), ("16p", "P", White)]);
    let t = targets(&pos, "18r");
    assert!(t.contains(&"17q".to_string()) && !t.contains(&"16p".to_string()));
}

#[test]
fn lion_moves() {
    use Color::*;
    let pos = board(&[("18r", "LN", Black), ("18q", "P", White)]);
    let list = moves(&pos, "18r");
    let from = pos.variant.geometry.parse_square("18r").unwrap() as u16;
    let mid = pos.variant.geometry.parse_square("18q").unwrap() as u16;
    // 24 plain destinations, 1 pass, and 8 second steps after taking 18q (one is igui).
    assert_eq!(list.iter().filter(|m| m.mid == NO_SQUARE && m.to != from).count(), 24);
    assert!(list.iter().any(|m| m.is_pass()));
    assert_eq!(list.iter().filter(|m| m.mid == mid).count(), 8);
    assert!(list.iter().any(|m| m.is_igui() && m.mid == mid));
    // No pass when every neighbour is occupied.
    let mut crowded = vec![("18r", "LN", Black)];
    for sq in ["17q", "18q", "19q", "17r", "19r", "17s", "18s", "19s"] {
        crowded.push((sq, "P", Black));
    }
    assert!(!moves(&board(&crowded), "18r").iter().any(|m| m.is_pass()));
}

#[test]
fn trapped_pieces_only_capture() {
    use Color::*;
    // Running wolf on Black's furthest rank: sideways moves only when they capture.
    let pos = board(&[("18a", "RW", Black), ("15a", "P", White)]);
    assert_eq!(targets(&pos, "18a"), ["15a"]);
    let pos = board(&[("18b", "RW", Black)]);
    assert!(targets(&pos, "18b").len() > 3);
}
