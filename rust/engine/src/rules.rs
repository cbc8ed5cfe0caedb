//! Variant-level rules as data: the `variants/<name>.rules` file beside the piece table and the
//! setup (format: docs/PIECE_TABLE.md, "The rules file").
//!
//! A rules file is `key value` lines. Every key but `board` has a documented default, so a
//! variant states only where it differs. The flags the hot path reads (does a capture promote?)
//! are derived here once.

use std::fmt;

/// How pieces promote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promotion {
    /// A piece that can promote does so with its first move that removes a piece (Taikyoku,
    /// Dai dai), whatever the square.
    Capture,
    /// A piece may promote with a move into or within the far ranks (Tenjiku): a choice, so a
    /// move that may promote is generated twice, promoting and declining.
    Zone(Zone),
}

/// The promotion zone and when a move in it may promote (`promotion zone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// The far ranks that form the zone (`promotion-zone`, default 5).
    pub depth: u8,
    /// Which moves may promote (`promotion-trigger`).
    pub trigger: ZoneTrigger,
    /// Whether a piece that could never move again from where it lands must promote
    /// (`promotion-forced dead-end`, the default; `none`: it may stay, a dead piece).
    pub forced_dead_end: bool,
}

/// Which moves in the zone may promote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneTrigger {
    /// A move from outside into the zone, or a capture that starts or ends in it: a piece that
    /// declined may promote again only by capturing in the zone, or by leaving and re-entering
    /// (`enter-or-capture`, the default).
    EnterOrCapture,
    /// Any move that starts or ends in the zone (`touch`).
    Touch,
}

/// What the Nth occurrence of a position (same side to move) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repetition {
    /// The occurrence the rule acts on (4: the fourth).
    pub count: u32,
    /// Whether that occurrence ends the game or may not be made.
    pub mode: RepetitionMode,
}

/// How the repetition rule acts (`repetition-mode` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepetitionMode {
    /// The occurrence ends the game (no contest, or perpetual check loses): Taikyoku.
    End,
    /// A move that would make the occurrence is not legal (Dai dai: "a player may not make a
    /// move if the resulting position is one that has previously occurred").
    Forbid,
}

/// What a side that checked the other's sole royal with every move of a repetition cycle gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerpetualCheck {
    /// It loses (the seed's rule for Taikyoku).
    Loses,
    /// Nothing special: the repetition rule decides.
    Repetition,
}

/// What a side with no legal move gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoMoves {
    /// It loses (the shogi convention).
    Loses,
    /// The game is drawn.
    Draw,
}

/// The rules of a variant that are not a piece's movement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Files on the board (1 to `MAX_SIDE`).
    pub width: usize,
    /// Ranks on the board (1 to `MAX_SIDE`).
    pub height: usize,
    /// When pieces promote (`promotion` key).
    pub promotion: Promotion,
    /// Which occurrence of a position ends the game (`repetition` key, default 4).
    pub repetition: Repetition,
    /// Whether perpetual check loses at that occurrence (`perpetual-check` key).
    pub perpetual_check: PerpetualCheck,
    /// What a side with no legal move gets (`no-moves` key).
    pub no_moves: NoMoves,
    /// The most consecutive passes a player may make (`max-consecutive-passes` key); `None`:
    /// no limit.
    pub max_consecutive_passes: Option<u8>,
    /// The variant's name for people (`title` key: `Tenjiku shogi`); `None`: its file name.
    pub title: Option<String>,
    /// The Gymnasium environment id of the variant, without the `taikyoku/` namespace (`gym-id`
    /// key: `Tenjiku-v0`); `None`: derived from its file name (`Variant::gym_id`).
    pub gym_id: Option<String>,
}

/// A rules-file error, with its line (1-based; 0 for the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError {
    /// 1-based line of the rules file; 0 for the file as a whole (no `board` line).
    pub line: usize,
    /// What is wrong, for a person to read.
    pub message: String,
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "rules file: {}", self.message)
        } else {
            write!(f, "rules file line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for RulesError {}

/// The largest board the square names and the 36×36 action/observation grid allow.
pub const MAX_SIDE: usize = 36;

/// A rule option of the rules file: `option NAME | key value` (docs/PIECE_TABLE.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesOption {
    /// The option's name (several lines may share it).
    pub name: String,
    /// The rules key it sets.
    pub key: String,
}

impl Rules {
    /// Reads a rules file, without rule options.
    pub fn parse(text: &str) -> Result<Rules, RulesError> {
        Rules::parse_with_options(text, &[]).map(|(rules, _)| rules)
    }

    /// Reads a rules file with the named rule options applied: each enabled `option NAME | key
    /// value` line replaces the file's value of that key. Returns the rules and every option the
    /// file offers; names it does not offer are left for the piece table to claim.
    pub fn parse_with_options(text: &str, options: &[String]) -> Result<(Rules, Vec<RulesOption>), RulesError> {
        // The lines that apply: the file's own, with each enabled option's line in place of the
        // line of the same key (or added).
        let mut lines: Vec<(usize, &str)> = Vec::new();
        let mut offered: Vec<RulesOption> = Vec::new();
        let mut enabled: Vec<(usize, &str)> = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if let Some(rest) = line.strip_prefix("option ") {
                let err = |message: String| RulesError { line: n + 1, message };
                let (name, setting) =
                    rest.split_once('|').ok_or_else(|| err("option line needs NAME | key value".into()))?;
                let (name, setting) = (name.trim(), setting.trim());
                if name.is_empty() || name.contains(char::is_whitespace) || setting.is_empty() {
                    return Err(err("option line needs NAME | key value".into()));
                }
                let key = setting.split_whitespace().next().unwrap_or("");
                if matches!(key, "board" | "option" | "title" | "gym-id") {
                    return Err(err(format!("an option may not set '{key}'")));
                }
                offered.push(RulesOption { name: name.to_string(), key: key.to_string() });
                if options.iter().any(|o| o == name) {
                    enabled.push((n, setting));
                }
            } else {
                lines.push((n, raw));
            }
        }
        let option_keys: Vec<&str> = enabled.iter().map(|(_, l)| l.split_whitespace().next().unwrap_or("")).collect();
        lines.retain(|(_, raw)| {
            let line = raw.split('#').next().unwrap_or("").trim();
            !option_keys.contains(&line.split_whitespace().next().unwrap_or(""))
        });
        lines.extend(enabled);
        Ok((Rules::parse_lines(&lines)?, offered))
    }

    /// Reads the key-value lines of a rules file (line index, text).
    fn parse_lines(text: &[(usize, &str)]) -> Result<Rules, RulesError> {
        let mut board = None;
        let mut rules = Rules {
            width: 0,
            height: 0,
            promotion: Promotion::Capture,
            repetition: Repetition { count: 4, mode: RepetitionMode::End },
            perpetual_check: PerpetualCheck::Loses,
            no_moves: NoMoves::Loses,
            max_consecutive_passes: None,
            title: None,
            gym_id: None,
        };
        let mut seen: Vec<&str> = Vec::new();
        let mut zone = Zone { depth: 5, trigger: ZoneTrigger::EnterOrCapture, forced_dead_end: true };
        let mut zone_lines: Vec<(usize, &str)> = Vec::new();
        for &(n, raw) in text {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |message: String| RulesError { line: n + 1, message };
            let (key, value) = line.split_once(char::is_whitespace).map_or((line, ""), |(k, v)| (k, v.trim()));
            if seen.contains(&key) {
                return Err(err(format!("'{key}' is given twice")));
            }
            let choice = |options: &[&str]| -> Result<usize, RulesError> {
                options
                    .iter()
                    .position(|o| *o == value)
                    .ok_or_else(|| err(format!("{key} must be {}, not '{value}'", options.join(" or "))))
            };
            match key {
                "board" => {
                    let parsed = value.split_once('x').and_then(|(w, h)| Some((w.parse::<usize>().ok()?, h.parse::<usize>().ok()?)));
                    let (w, h) = parsed.ok_or_else(|| err(format!("board must be WIDTHxHEIGHT, e.g. 36x36, not '{value}'")))?;
                    if !(1..=MAX_SIDE).contains(&w) || !(1..=MAX_SIDE).contains(&h) {
                        return Err(err(format!("board {w}x{h}: each side must be 1 to {MAX_SIDE}")));
                    }
                    board = Some((w, h));
                }
                "promotion" => {
                    rules.promotion = match choice(&["capture", "zone"])? {
                        0 => Promotion::Capture,
                        _ => Promotion::Zone(zone),
                    };
                }
                "promotion-zone" => {
                    zone.depth = value.parse().ok().filter(|d| (1..=MAX_SIDE as u8).contains(d)).ok_or_else(|| {
                        err(format!("promotion-zone must be the number of far ranks, 1 to {MAX_SIDE}, not '{value}'"))
                    })?;
                    zone_lines.push((n + 1, key));
                }
                "promotion-trigger" => {
                    zone.trigger = [ZoneTrigger::EnterOrCapture, ZoneTrigger::Touch][choice(&["enter-or-capture", "touch"])?];
                    zone_lines.push((n + 1, key));
                }
                "promotion-forced" => {
                    zone.forced_dead_end = choice(&["dead-end", "none"])? == 0;
                    zone_lines.push((n + 1, key));
                }
                "repetition" => {
                    let count: u32 = value.parse().ok().filter(|c| (2..=1000).contains(c)).ok_or_else(|| {
                        err(format!("repetition must be the occurrence that ends the game, 2 to 1000, not '{value}'"))
                    })?;
                    rules.repetition.count = count;
                }
                "repetition-mode" => {
                    rules.repetition.mode = [RepetitionMode::End, RepetitionMode::Forbid][choice(&["end", "forbid"])?];
                }
                "perpetual-check" => {
                    rules.perpetual_check = [PerpetualCheck::Loses, PerpetualCheck::Repetition][choice(&["loses", "repetition"])?];
                }
                "no-moves" => rules.no_moves = [NoMoves::Loses, NoMoves::Draw][choice(&["loses", "draw"])?],
                "max-consecutive-passes" => {
                    let limit: u8 = value.parse().ok().filter(|c| (1..=100).contains(c)).ok_or_else(|| {
                        err(format!("max-consecutive-passes must be the number of passes in a row allowed, 1 to 100, not '{value}'"))
                    })?;
                    rules.max_consecutive_passes = Some(limit);
                }
                "title" => {
                    if value.is_empty() || value.len() > 80 {
                        return Err(err("title must be the variant's name, 1 to 80 characters".into()));
                    }
                    rules.title = Some(value.to_string());
                }
                "gym-id" => {
                    if !is_gym_id(value) {
                        return Err(err(format!(
                            "gym-id must be NAME-vVERSION (letters, digits, '_', '.', '-'; e.g. Tenjiku-v0), not '{value}'"
                        )));
                    }
                    rules.gym_id = Some(value.to_string());
                }
                other => {
                    return Err(err(format!(
                        "unknown key '{other}' (known: board, title, gym-id, promotion, promotion-zone, promotion-trigger, promotion-forced, repetition, repetition-mode, perpetual-check, no-moves, max-consecutive-passes)"
                    )))
                }
            }
            seen.push(key);
        }
        let (width, height) = board.ok_or(RulesError { line: 0, message: "no 'board WIDTHxHEIGHT' line".into() })?;
        rules.width = width;
        rules.height = height;
        // The zone keys may come before or after `promotion zone`; they mean nothing without it.
        match &mut rules.promotion {
            Promotion::Zone(z) => {
                *z = zone;
                if z.depth as usize > height {
                    return Err(RulesError {
                        line: 0,
                        message: format!("promotion-zone {} is deeper than the board", z.depth),
                    });
                }
            }
            Promotion::Capture => {
                if let Some(&(line, key)) = zone_lines.first() {
                    return Err(RulesError { line, message: format!("'{key}' needs 'promotion zone'") });
                }
            }
        }
        Ok(rules)
    }

    /// Whether a move that removes a piece promotes the mover (when its type promotes).
    #[inline]
    pub fn promotes_on_capture(&self) -> bool {
        self.promotion == Promotion::Capture
    }

    /// The promotion zone, when pieces promote in one.
    #[inline]
    pub fn zone(&self) -> Option<&Zone> {
        match &self.promotion {
            Promotion::Zone(z) => Some(z),
            Promotion::Capture => None,
        }
    }
}

/// Whether `id` is a Gymnasium environment name with a version and no namespace (`Tenjiku-v0`).
pub fn is_gym_id(id: &str) -> bool {
    let Some((name, version)) = id.rsplit_once("-v") else { return false };
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !version.is_empty()
        && version.len() <= 6
        && version.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        let rules = Rules::parse("# a variant\nboard 16x17   # width x height\n").unwrap();
        assert_eq!((rules.width, rules.height), (16, 17));
        assert_eq!(rules.promotion, Promotion::Capture);
        assert_eq!(rules.repetition.count, 4);
        assert_eq!(rules.perpetual_check, PerpetualCheck::Loses);
        assert_eq!(rules.no_moves, NoMoves::Loses);
        assert_eq!(rules.repetition.mode, RepetitionMode::End);
        let rules = Rules::parse("board 9x9\nrepetition 3\nperpetual-check repetition\nno-moves draw").unwrap();
        assert_eq!(
            (rules.repetition.count, rules.perpetual_check, rules.no_moves),
            (3, PerpetualCheck::Repetition, NoMoves::Draw)
        );
        let rules = Rules::parse("board 17x17\nrepetition 2\nrepetition-mode forbid").unwrap();
        assert_eq!(rules.repetition, Repetition { count: 2, mode: RepetitionMode::Forbid });
        let rules = Rules::parse("board 16x16\npromotion-trigger touch\npromotion zone\npromotion-zone 5").unwrap();
        assert_eq!(rules.zone(), Some(&Zone { depth: 5, trigger: ZoneTrigger::Touch, forced_dead_end: true }));
        for (text, line, fragment) in [
            ("promotion capture", 0, "no 'board"),
            ("board 37x36", 1, "1 to 36"),
            ("board nine", 1, "WIDTHxHEIGHT"),
            ("board 9x9\nboard 9x9", 2, "twice"),
            ("board 9x9\n\npromotion always", 3, "capture"),
            ("board 9x9\nrepetition 1", 2, "2 to 1000"),
            ("board 9x9\ncastling yes", 2, "unknown key 'castling'"),
            ("board 9x9\nrepetition-mode draw", 2, "end or forbid"),
            ("board 9x9\npromotion-zone 3", 2, "needs 'promotion zone'"),
            ("board 9x9\npromotion zone\npromotion-zone 10", 0, "deeper than the board"),
            ("board 9x9\npromotion zone\npromotion-trigger always", 3, "enter-or-capture or touch"),
            ("board 9x9\noption touchy promotion-trigger touch", 2, "NAME | key value"),
            ("board 9x9\noption big | board 10x10", 2, "may not set 'board'"),
            ("board 9x9\noption named | title Other", 2, "may not set 'title'"),
            ("board 9x9\ngym-id Tenjiku", 2, "NAME-vVERSION"),
            ("board 9x9\ngym-id taikyoku/Tenjiku-v0", 2, "NAME-vVERSION"),
            ("board 9x9\ntitle", 2, "1 to 80 characters"),
        ] {
            let e = Rules::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.to_string().contains(fragment), "{text}: {e}");
        }
    }

    #[test]
    fn title_and_gym_id() {
        let rules = Rules::parse("board 9x9\ntitle  Small shogi   # for people\ngym-id Small-v2").unwrap();
        assert_eq!((rules.title.as_deref(), rules.gym_id.as_deref()), (Some("Small shogi"), Some("Small-v2")));
        let rules = Rules::parse("board 9x9").unwrap();
        assert_eq!((rules.title, rules.gym_id), (None, None));
        assert!(is_gym_id("Dai_dai.2-v10") && !is_gym_id("-v0") && !is_gym_id("Dai dai-v0") && !is_gym_id("Tenjiku-v"));
    }

    #[test]
    fn options_replace_or_add_lines() {
        let text = "board 9x9\npromotion zone\npromotion-trigger enter-or-capture\n\
                    option touch | promotion-trigger touch\n\
                    option forbid | repetition 2\noption forbid | repetition-mode forbid";
        let (plain, offered) = Rules::parse_with_options(text, &[]).unwrap();
        assert_eq!(plain.zone().unwrap().trigger, ZoneTrigger::EnterOrCapture);
        assert_eq!(plain.repetition, Repetition { count: 4, mode: RepetitionMode::End });
        let names: Vec<&str> = offered.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["touch", "forbid", "forbid"]);
        let (both, _) = Rules::parse_with_options(text, &["touch".into(), "forbid".into()]).unwrap();
        assert_eq!(both.zone().unwrap().trigger, ZoneTrigger::Touch);
        assert_eq!(both.repetition, Repetition { count: 2, mode: RepetitionMode::Forbid });
        // A bad value in an option is found when the option is enabled, with its line.
        let e = Rules::parse_with_options("board 9x9\noption x | repetition 1", &["x".into()]).unwrap_err();
        assert_eq!(e.line, 2);
    }
}
