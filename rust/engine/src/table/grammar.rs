//! The movement strings of a piece table (docs/PIECE_TABLE.md): directions, atoms, `as(KEY)`
//! references; and the squares each atom reaches, to find types whose atoms overlap.

use super::{Atom, UNLIMITED};

fn direction_group(name: &str) -> Option<&'static [u8]> {
    // Relative directions: 0 f, 1 fr, 2 r, 3 br, 4 b, 5 bl, 6 l, 7 fl.
    Some(match name {
        "f" => &[0],
        "fr" => &[1],
        "r" => &[2],
        "br" => &[3],
        "b" => &[4],
        "bl" => &[5],
        "l" => &[6],
        "fl" => &[7],
        "orth" => &[0, 2, 4, 6],
        "diag" => &[1, 3, 5, 7],
        "all" => &[0, 1, 2, 3, 4, 5, 6, 7],
        "side" => &[2, 6],
        "vert" => &[0, 4],
        "fdiag" => &[1, 7],
        "bdiag" => &[3, 5],
        "fwd" => &[0, 1, 7],
        "bwd" => &[3, 4, 5],
        "leftward" => &[5, 6, 7],
        "rightward" => &[1, 2, 3],
        _ => return None,
    })
}

fn parse_directions(text: &str) -> Result<Vec<u8>, String> {
    let mut dirs = Vec::new();
    for part in text.split('+') {
        let group = direction_group(part.trim()).ok_or_else(|| format!("unknown direction '{part}'"))?;
        for &d in group {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    Ok(dirs)
}

pub(super) fn parse_number(text: &str) -> Result<u8, String> {
    text.trim().parse::<u8>().map_err(|_| format!("'{text}' is not a number"))
}

/// A movement token before `as(...)` references are resolved.
pub(super) enum Token {
    Atoms(Vec<Atom>),
    As(String),
}

fn parse_token(token: &str) -> Result<Token, String> {
    let (name, args) = match token.find('(') {
        Some(open) => {
            if !token.ends_with(')') {
                return Err(format!("unclosed '(' in '{token}'"));
            }
            (&token[..open], token[open + 1..token.len() - 1].split(',').map(str::trim).collect::<Vec<_>>())
        }
        None => (token, Vec::new()),
    };
    let want = |n: usize| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("'{name}' takes {n} argument(s), got '{token}'"))
        }
    };
    let each = |f: &dyn Fn(u8) -> Atom| -> Result<Token, String> {
        Ok(Token::Atoms(parse_directions(args[0])?.into_iter().map(f).collect()))
    };
    match name {
        "step" => {
            want(1)?;
            each(&|dir| Atom::Slide { dir, max: 1 })
        }
        "limit" => {
            want(2)?;
            let max = parse_number(args[1])?;
            each(&|dir| Atom::Slide { dir, max })
        }
        "range" => {
            want(1)?;
            each(&|dir| Atom::Slide { dir, max: UNLIMITED })
        }
        "jump" => {
            want(2)?;
            let k = parse_number(args[1])?;
            each(&|dir| Atom::Jump { dir, k, then: 0 })
        }
        "jumprange" => {
            want(2)?;
            let k = parse_number(args[1])?;
            each(&|dir| Atom::Jump { dir, k, then: UNLIMITED })
        }
        "jumplimit" => {
            want(3)?;
            let k = parse_number(args[1])?;
            let then = parse_number(args[2])?;
            each(&|dir| Atom::Jump { dir, k, then })
        }
        "hop" => {
            want(2)?;
            let pieces = parse_number(args[1])?;
            each(&|dir| Atom::Hop { dir, pieces })
        }
        "rangecap" => {
            want(1)?;
            each(&|dir| Atom::RangeCapture { dir })
        }
        "rangejump" => {
            // `rangejump(D)`: over any number of pieces; `rangejump(D,n)`: over at most n.
            let pieces = match args.len() {
                1 => UNLIMITED,
                _ => {
                    want(2)?;
                    parse_number(args[1]).ok().filter(|&n| (1..UNLIMITED).contains(&n)).ok_or_else(|| {
                        format!("'{token}': rangejump(D,n) needs a count of pieces from 1 to {}", UNLIMITED - 1)
                    })?
                }
            };
            each(&|dir| Atom::RangeJump { dir, pieces })
        }
        "hook" => {
            want(1)?;
            each(&|dir| Atom::Hook { dir })
        }
        "leap" => {
            want(2)?;
            // -128 is refused: the mirror image and White's turn negate the offsets, and -128
            // has no negation in i8 (fuzz/regressions/piece_table/leap-minus-128-*).
            let offset = |text: &str| {
                text.parse::<i8>().ok().filter(|&v| v != i8::MIN).ok_or_else(|| format!("bad leap '{token}'"))
            };
            let (dx, dy) = (offset(args[0])?, offset(args[1])?);
            let mut atoms = vec![Atom::Leap { dx, dy }];
            if dx != 0 {
                atoms.push(Atom::Leap { dx: -dx, dy });
            }
            Ok(Token::Atoms(atoms))
        }
        "lion" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Lion]))
        }
        "lionline" => {
            // `lionline(D,n,n)`: every step may capture (Dai dai); `lionline(D,n)`: two legs
            // (Taishin). At n = 2 they are the same moves, stored the same way.
            let every_step = match args.len() {
                2 => false,
                _ => {
                    want(3)?;
                    if parse_number(args[2])? != parse_number(args[1])? {
                        return Err(format!("'{token}': in lionline(D,n,n) both counts are the reach"));
                    }
                    true
                }
            };
            let reach = parse_number(args[1])?;
            if !(2..=3).contains(&reach) {
                return Err(format!("'{token}': lionline needs a reach of 2 or 3"));
            }
            let every_step = every_step || reach == 2;
            each(&|dir| Atom::LionLine { dir, reach, every_step })
        }
        "rankjump" => {
            want(1)?;
            each(&|dir| Atom::RankJump { dir })
        }
        "rankhop" => {
            want(1)?;
            each(&|dir| Atom::RankHop { dir })
        }
        "area" => {
            want(1)?;
            let steps = parse_number(args[0])?;
            if !(2..=4).contains(&steps) {
                return Err(format!("'{token}': area(n) needs n from 2 to 4"));
            }
            Ok(Token::Atoms(vec![Atom::Area { steps }]))
        }
        "double" => {
            want(1)?;
            let dirs = parse_directions(args[0])?.into_iter().fold(0u8, |mask, d| mask | 1 << d);
            Ok(Token::Atoms(vec![Atom::Double { dirs }]))
        }
        "igui" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Igui]))
        }
        "teleport" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Teleport]))
        }
        "as" => {
            want(1)?;
            Ok(Token::As(args[0].to_string()))
        }
        _ => Err(format!("unknown movement atom '{token}'")),
    }
}

pub(super) fn tokenize_moves(text: &str) -> Result<Vec<Token>, String> {
    // Split on spaces outside parentheses ("as(Free king)" keeps its space).
    let mut tokens = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if !current.is_empty() {
                tokens.push(parse_token(&current)?);
                current.clear();
            }
        } else {
            current.push(c);
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    if !current.is_empty() {
        tokens.push(parse_token(&current)?);
    }
    Ok(tokens)
}

pub(super) fn normalize(name: &str) -> String {
    name.trim().to_lowercase().replace(['’', '\''], "'").replace('-', " ")
}

/// Squares an atom reaches from the centre of an empty, unbounded board (for overlap detection).
pub(super) fn footprint(atom: &Atom) -> Vec<(i32, i32)> {
    const REACH: i32 = 40;
    let delta = |dir: u8| -> (i32, i32) {
        let (dx, dy) = crate::geometry::DELTAS[dir as usize];
        (dx, dy)
    };
    let ray = |dir: u8, from: i32, to: i32| -> Vec<(i32, i32)> {
        let (dx, dy) = delta(dir);
        (from..=to).map(|i| (dx * i, dy * i)).collect()
    };
    let lim = |m: u8| if m == UNLIMITED { REACH } else { m as i32 };
    match *atom {
        Atom::Slide { dir, max } => ray(dir, 1, lim(max)),
        Atom::Jump { dir, k, then } => ray(dir, k as i32, k as i32 + lim(then).min(REACH)),
        Atom::Leap { dx, dy } => vec![(dx as i32, -(dy as i32))],
        Atom::Hop { dir, .. } | Atom::RangeCapture { dir } | Atom::RangeJump { dir, .. } => ray(dir, 1, REACH),
        // Hooks reach squares by several paths; lions and igui are deduplicated by hand.
        // Every lion line passes on its start square: always deduplicated.
        Atom::LionLine { dir, reach, .. } => {
            let mut squares = ray(dir, 1, reach as i32);
            squares.push((0, 0));
            squares
        }
        Atom::RankJump { dir } | Atom::RankHop { dir } => ray(dir, 1, REACH),
        // Area moves and double steps reach squares by several paths, and pass: deduplicated.
        Atom::Area { .. } | Atom::Double { .. } => {
            let mut squares: Vec<(i32, i32)> = (-2..=2).flat_map(|x| (-2..=2).map(move |y| (x, y))).collect();
            squares.push((0, 0));
            squares
        }
        Atom::Hook { .. } | Atom::Lion | Atom::Igui => (-2..=2).flat_map(|x| (-2..=2).map(move |y| (x, y))).collect(),
        // Everywhere: any other atom beside it overlaps.
        Atom::Teleport => {
            (-REACH..=REACH).flat_map(|x| (-REACH..=REACH).map(move |y| (x, y))).filter(|&s| s != (0, 0)).collect()
        }
    }
}
