//! `PieceTable::parse`: a table's text to the table the generator reads, in named steps:
//! read the lines, apply the rule options, index the names, build each type (its `as(...)`
//! references resolved into atoms, its promotion and conferral named), check how each type is
//! written, and compile the generator's view (`Motion`, the absolute atoms and rays).
//!
//! The steps run in that order and each stops at its first error, so a table with several
//! mistakes always reports the same one (the fuzz regressions pin some of them).

use super::grammar::{footprint, normalize, parse_number, tokenize_moves, Token};
use super::{is_code, Atom, Kind, Motion, PieceTable, PieceType, Ray, TableError, Trap, NO_RANK};
use crate::geometry::{absolute_direction, Color, DIRECTION_COUNT};
use std::collections::HashMap;

/// A `TableError` at the 0-based line index `line`.
fn err(line: usize, message: String) -> TableError {
    TableError { line: line + 1, message }
}

/// A piece line as written, before the names it uses are resolved.
struct PieceLine {
    line: usize,
    key: String,
    sign: String,
    name: String,
    kanji: String,
    promotes: String,
    royal: bool,
    burns: bool,
    far_promotion: bool,
    promoted_only: bool,
    confers: String,
    range_rank: u8,
    trap: Trap,
    moves: String,
}

/// An `option NAME KEY | VALUE` line: VALUE replaces KEY's moves, or its promotion.
struct OptionLine {
    line: usize,
    option: String,
    key: String,
    value: String,
}

/// A table's lines by kind, in file order.
#[derive(Default)]
struct Lines {
    pieces: Vec<PieceLine>,
    /// `option NAME KEY | moves`.
    move_options: Vec<OptionLine>,
    /// `option NAME KEY promotes-to | TARGET`.
    promotion_options: Vec<OptionLine>,
    /// `alias KEY | Name`: (line, key, name).
    aliases: Vec<(usize, String, String)>,
    /// Every option line's (name, key), for `PieceTable::options`.
    offered: Vec<(String, String)>,
}

/// How the types are named: by key, and by name or alias (normalised).
struct Names {
    by_key: HashMap<String, Kind>,
    by_name: HashMap<String, Kind>,
    /// Each type's aliases, in file order.
    aliases_of: Vec<Vec<String>>,
}

impl Names {
    /// The type a key or a name (as `as(...)`, `promotes to` and `confers=` write it) names.
    fn find(&self, text: &str) -> Option<Kind> {
        self.by_key.get(text).or_else(|| self.by_name.get(&normalize(text))).copied()
    }
}

impl PieceTable {
    /// Parses a table; `options` names the rule options to apply.
    pub fn parse(text: &str, options: &[String]) -> Result<PieceTable, TableError> {
        let mut lines = read_lines(text)?;
        apply_options(&mut lines, options)?;
        let mut names = index_names(&lines)?;
        let types = build_types(&lines.pieces, &mut names)?;
        check_written_forms(&types, &lines.pieces)?;
        let (motions, absolute_atoms, absolute_rays) = compile(&types);
        let has_burners = types.iter().any(|t| t.burns);
        let has_conferrers = types.iter().any(|t| t.confers.is_some());
        let mut with_sign: HashMap<&str, (Kind, usize)> = HashMap::new();
        for (k, t) in types.iter().enumerate() {
            with_sign.entry(&t.sign).or_insert((k as Kind, 0)).1 += 1;
        }
        let sign_classes = types.iter().map(|t| with_sign[t.sign.as_str()]).map(|(first, n)| (first, n > 1)).collect();
        Ok(PieceTable {
            types,
            motions,
            absolute_atoms,
            absolute_rays,
            by_key: names.by_key,
            by_name: names.by_name,
            options: lines.offered,
            has_burners,
            has_conferrers,
            sign_classes,
        })
    }
}

/// Step 1: the lines, each checked on its own (fields, attributes, duplicate keys).
fn read_lines(text: &str) -> Result<Lines, TableError> {
    let mut lines = Lines::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("option ") {
            let (head, value) = rest.split_once('|').ok_or_else(|| err(n, "option line needs '|'".into()))?;
            let (option, key) =
                head.trim().split_once(' ').ok_or_else(|| err(n, "option line needs NAME KEY".into()))?;
            // `option NAME KEY promotes-to | TARGET` replaces the promotion, else the moves.
            let (key, target) = match key.trim().strip_suffix(" promotes-to") {
                Some(key) => (key.trim(), &mut lines.promotion_options),
                None => (key.trim(), &mut lines.move_options),
            };
            lines.offered.push((option.to_string(), key.to_string()));
            target.push(OptionLine {
                line: n,
                option: option.to_string(),
                key: key.to_string(),
                value: value.trim().to_string(),
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("alias ") {
            let (key, name) = rest.split_once('|').ok_or_else(|| err(n, "alias line needs KEY | Name".into()))?;
            let name = name.trim();
            if name.is_empty() {
                return Err(err(n, "alias line needs a name after '|'".into()));
            }
            lines.aliases.push((n, key.trim().to_string(), name.to_string()));
            continue;
        }
        let piece = read_piece(n, line)?;
        if lines.pieces.iter().any(|p| p.key == piece.key) {
            return Err(err(n, format!("duplicate key '{}'", piece.key)));
        }
        lines.pieces.push(piece);
    }
    Ok(lines)
}

/// A `KEY | Name | kanji | promotes to | attributes | moves` line (0-based index `n`).
fn read_piece(n: usize, line: &str) -> Result<PieceLine, TableError> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    if fields.len() != 6 {
        return Err(err(n, format!("expected 6 '|'-separated fields, found {}", fields.len())));
    }
    let mut piece = PieceLine {
        line: n,
        key: fields[0].to_string(),
        sign: fields[0].to_string(),
        name: fields[1].to_string(),
        kanji: fields[2].to_string(),
        promotes: fields[3].to_string(),
        royal: false,
        burns: false,
        far_promotion: false,
        promoted_only: false,
        confers: String::new(),
        range_rank: NO_RANK,
        trap: Trap::None,
        moves: fields[5].to_string(),
    };
    for attribute in fields[4].split_whitespace() {
        match attribute {
            "royal" => {
                piece.royal = true;
                piece.range_rank = 0;
            }
            "burn" => piece.burns = true,
            "farpromote" => piece.far_promotion = true,
            "promoted-only" => piece.promoted_only = true,
            a if a.starts_with("confers=") => piece.confers = a["confers=".len()..].to_string(),
            "trapped" => piece.trap = Trap::FurthestRank,
            "stuck" => piece.trap = Trap::OwnFirstRank,
            a if a.starts_with("rank=") => {
                piece.range_rank = parse_number(&a[5..]).map_err(|m| err(n, m))?;
            }
            a if a.starts_with("sign=") => piece.sign = a[5..].to_string(),
            a => return Err(err(n, format!("unknown attribute '{a}'"))),
        }
    }
    Ok(piece)
}

/// Step 2: the enabled options' lines replace the moves or the promotion of the piece they name.
/// Options the table does not offer are left alone: the variant checks every option against
/// what its rules file and its table offer (`Variant::from_sources`).
fn apply_options(lines: &mut Lines, options: &[String]) -> Result<(), TableError> {
    for (replacements, promotion) in [(&lines.move_options, false), (&lines.promotion_options, true)] {
        for OptionLine { line, option, key, value } in replacements {
            if options.contains(option) {
                let piece = lines
                    .pieces
                    .iter_mut()
                    .find(|p| &p.key == key)
                    .ok_or_else(|| err(*line, format!("option '{option}' names unknown piece '{key}'")))?;
                if promotion {
                    piece.promotes = value.clone();
                } else {
                    piece.moves = value.clone();
                }
            }
        }
    }
    Ok(())
}

/// Step 3: every type by key, by name and by alias.
fn index_names(lines: &Lines) -> Result<Names, TableError> {
    let pieces = &lines.pieces;
    let by_key: HashMap<String, Kind> = pieces.iter().enumerate().map(|(i, p)| (p.key.clone(), i as Kind)).collect();
    let mut by_name = HashMap::new();
    for (i, p) in pieces.iter().enumerate() {
        by_name.entry(normalize(&p.name)).or_insert(i as Kind);
    }
    let mut aliases_of: Vec<Vec<String>> = vec![Vec::new(); pieces.len()];
    for (n, key, alias) in &lines.aliases {
        let kind = *by_key.get(key).ok_or_else(|| err(*n, format!("alias of unknown piece '{key}'")))?;
        // An alias names one piece: it may not be another piece's key, name or alias.
        let clash = by_key.get(alias).or_else(|| by_name.get(&normalize(alias))).filter(|&&k| k != kind);
        if let Some(&other) = clash {
            return Err(err(*n, format!("alias '{alias}' already names '{}'", pieces[other as usize].key)));
        }
        by_name.insert(normalize(alias), kind);
        aliases_of[kind as usize].push(alias.clone());
    }
    Ok(Names { by_key, by_name, aliases_of })
}

/// Step 4: each type, in file order: its atoms (`as(...)` resolved), promotion, conferral and
/// whether its atoms overlap. Takes the aliases out of `names`.
fn build_types(pieces: &[PieceLine], names: &mut Names) -> Result<Vec<PieceType>, TableError> {
    let tokens: Vec<Vec<Token>> =
        pieces.iter().map(|p| tokenize_moves(&p.moves).map_err(|m| err(p.line, m))).collect::<Result<_, _>>()?;
    let mut types = Vec::with_capacity(pieces.len());
    let mut done = vec![None; pieces.len()];
    for (i, p) in pieces.iter().enumerate() {
        let atoms = resolve(i, &tokens, names, &mut Vec::new(), &mut done).map_err(|m| err(p.line, m))?;
        if atoms.is_empty() {
            return Err(err(p.line, format!("piece '{}' has no moves", p.key)));
        }
        // `promotes to` and `confers=` name a piece by key or name, as `as(...)` does.
        let named = |target: &str, what: &str| {
            names.find(target).ok_or_else(|| err(p.line, format!("{what} unknown piece '{target}'")))
        };
        let promotes_to = match p.promotes.as_str() {
            "-" | "" => None,
            target => Some(named(target, "promotes to")?),
        };
        let confers = match p.confers.as_str() {
            "" => None,
            target => Some(named(target, "confers")?),
        };
        if p.far_promotion && promotes_to.is_none() {
            return Err(err(p.line, format!("'{}' has farpromote but does not promote", p.key)));
        }
        types.push(PieceType {
            key: p.key.clone(),
            sign: p.sign.clone(),
            name: p.name.clone(),
            kanji: p.kanji.clone(),
            promotes_to,
            royal: p.royal,
            range_rank: p.range_rank,
            trap: p.trap,
            overlapping: overlapping(&atoms),
            atoms,
            promoted_only: p.promoted_only,
            aliases: std::mem::take(&mut names.aliases_of[i]),
            burns: p.burns,
            confers,
            far_promotion: p.far_promotion,
        });
    }
    Ok(types)
}

/// The atoms of type `i`, its `as(KEY)` references resolved depth-first, cycles rejected. Each
/// type is resolved once (`done`): without it a chain of types each naming the next twice took
/// exponential time (fuzz/regressions/piece_table/as-chain-exponential).
fn resolve(
    i: usize,
    tokens: &[Vec<Token>],
    names: &Names,
    stack: &mut Vec<usize>,
    done: &mut [Option<Vec<Atom>>],
) -> Result<Vec<Atom>, String> {
    if let Some(atoms) = &done[i] {
        return Ok(atoms.clone());
    }
    if stack.contains(&i) {
        return Err("as(...) references form a cycle".into());
    }
    stack.push(i);
    let mut atoms = Vec::new();
    for token in &tokens[i] {
        match token {
            Token::Atoms(list) => atoms.extend(list.iter().copied()),
            Token::As(key) => {
                let target = names.find(key).ok_or_else(|| format!("as({key}) names an unknown piece"))?;
                atoms.extend(resolve(target as usize, tokens, names, stack, done)?);
            }
        }
    }
    stack.pop();
    let mut unique = Vec::new();
    for a in atoms {
        if !unique.contains(&a) {
            unique.push(a);
        }
    }
    // Lion power includes igui: an `igui` beside `lion` made every igui move twice
    // (fuzz/regressions/piece_table/lion-igui).
    if unique.contains(&Atom::Lion) {
        unique.retain(|&a| a != Atom::Igui);
    }
    done[i] = Some(unique.clone());
    Ok(unique)
}

/// Whether a square one of `a` can reach, one of `b` can reach too (footprints, as in
/// `overlapping`).
pub(crate) fn footprints_meet(a: &[Atom], b: &[Atom]) -> bool {
    let reached: std::collections::HashSet<(i32, i32)> = a.iter().flat_map(footprint).collect();
    b.iter().flat_map(footprint).any(|s| reached.contains(&s))
}

/// Whether two of the atoms can reach the same square (so generation must drop duplicates).
pub(crate) fn overlapping(atoms: &[Atom]) -> bool {
    if atoms.iter().any(|a| matches!(a, Atom::Hook { .. } | Atom::Area { .. } | Atom::Double { .. })) {
        return true;
    }
    // Marks on the footprints' bounding box, not a hash set: a teleporter's footprint is the
    // 6,560 squares around it, and hashing them cost most of a variant's loading (issue 27).
    let squares: Vec<(i32, i32)> = atoms.iter().flat_map(footprint).collect();
    let (Some(x0), Some(y0)) = (squares.iter().map(|s| s.0).min(), squares.iter().map(|s| s.1).min()) else {
        return false;
    };
    let width = (squares.iter().map(|s| s.0).max().unwrap_or(x0) - x0 + 1) as usize;
    let height = (squares.iter().map(|s| s.1).max().unwrap_or(y0) - y0 + 1) as usize;
    let mut seen = vec![false; width * height];
    squares.iter().any(|&(x, y)| std::mem::replace(&mut seen[(y - y0) as usize * width + (x - x0) as usize], true))
}

/// Step 5: every type can be written and read back.
fn check_written_forms(types: &[PieceType], pieces: &[PieceLine]) -> Result<(), TableError> {
    for (t, p) in types.iter().zip(pieces) {
        // A set-up piece is written by its key in position texts (lower case for White) and
        // by its sign in notation (upper-case letters): `_P` or `Pa` could not be read back
        // (fuzz/regressions/piece_table/key-*). A promoted-only piece is written as the
        // promoted form of its origin, so its key may be its name.
        if !t.promoted_only && (!is_code(&t.key) || !is_code(&t.sign)) {
            return Err(err(
                p.line,
                format!(
                    "key '{}' and sign '{}' must be upper-case letters A-Z (a piece that only appears by \
                     promotion is marked `promoted-only`)",
                    t.key, t.sign
                ),
            ));
        }
        if t.promoted_only && t.promotes_to.is_some() {
            return Err(err(p.line, format!("promoted-only piece '{}' cannot promote again", t.key)));
        }
    }
    Ok(())
}

/// Step 6: the generator's view of the types: one `Motion` each, and every type's atoms (and
/// rays) with absolute directions, one array per colour.
fn compile(types: &[PieceType]) -> (Vec<Motion>, [Vec<Atom>; 2], [Vec<Ray>; 2]) {
    let mut motions = Vec::with_capacity(types.len());
    let mut absolute_atoms = [Vec::new(), Vec::new()];
    let mut absolute_rays = [Vec::new(), Vec::new()];
    for t in types {
        motions.push(motion(t, absolute_atoms[0].len() as u32));
        for color in Color::BOTH {
            absolute_atoms[color.index()].extend(t.atoms.iter().map(|a| a.absolute(color)));
            absolute_rays[color.index()].extend(t.atoms.iter().map(|a| a.absolute(color).ray().unwrap_or_default()));
        }
    }
    (motions, absolute_atoms, absolute_rays)
}

/// A type's `Motion`, its atoms starting at `start` in the absolute arrays.
fn motion(t: &PieceType, start: u32) -> Motion {
    let plain_slider = Motion::plain_slider(t);
    let rays_only = !plain_slider
        && !t.far_promotion
        && !t.atoms.is_empty()
        && t.atoms.iter().all(|a| matches!(a, Atom::Slide { .. } | Atom::Jump { .. }));
    // A plain slider's (relative direction, longest slide), in table order.
    let plain_slides: Vec<(u8, u8)> = t
        .atoms
        .iter()
        .filter(|_| plain_slider)
        .filter_map(|a| match *a {
            Atom::Slide { dir, max } => Some((dir, max)),
            _ => None,
        })
        .collect();
    Motion {
        start,
        len: t.atoms.len() as u32,
        range_rank: t.range_rank,
        trap: t.trap,
        overlapping: t.overlapping,
        zone_promotion: false,
        far_promotion: t.far_promotion,
        teleports: t.atoms.contains(&Atom::Teleport),
        line_dirs: Color::BOTH.map(|color| {
            t.atoms.iter().filter_map(|a| a.absolute(color).first_square_dir()).fold(0, |dirs, d| dirs | 1 << d)
        }),
        only_lines: t.atoms.iter().all(|a| a.first_square_dir().is_some()),
        plain_slider,
        slide_bits: Color::BOTH.map(|color| {
            let mut bits = [0; DIRECTION_COUNT];
            for (bit, slide) in bits.iter_mut().zip(&plain_slides) {
                *bit = 1 << absolute_direction(slide.0, color);
            }
            bits
        }),
        slide_max: {
            let mut max = [0; DIRECTION_COUNT];
            for (m, slide) in max.iter_mut().zip(&plain_slides) {
                *m = slide.1;
            }
            max
        },
        hooks_only: !t.atoms.is_empty()
            && t.atoms.iter().all(|a| matches!(a, Atom::Hook { .. }))
            && t.atoms.iter().filter_map(|a| a.first_square_dir()).fold(0u8, |dirs, d| dirs | 1 << d).count_ones()
                == t.atoms.len() as u32,
        rays_only,
    }
}
