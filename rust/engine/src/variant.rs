//! Variants: each is three data files read by one code path, a rules file (board size,
//! promotion, end of game), a piece table and a setup (`variants/<name>.{rules,pieces,setup}`).

pub use crate::cache::Caches;
use crate::geometry::{Color, Geometry};
use crate::rules::{Rules, RulesError, RulesOption};
use crate::table::{Kind, PieceTable, TableError};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// A variant with its rule options applied.
#[derive(Debug)]
pub struct Variant {
    /// The name it was loaded under (`taikyoku`).
    pub name: String,
    /// Board size and end-of-game rules, from the `.rules` file.
    pub rules: Rules,
    /// The board, `rules.width` × `rules.height`.
    pub geometry: Geometry,
    /// The piece table with the options applied.
    pub table: PieceTable,
    /// Black's initial pieces as (square, kind); White's are these rotated by 180°.
    pub setup: Vec<(usize, Kind)>,
    /// The rule options applied, sorted.
    pub options: Vec<String>,
    /// The options the rules file offers (`option NAME | key value` lines); the table's are in
    /// `table.options`.
    pub rules_options: Vec<RulesOption>,
    /// Values the modules above derive from the variant, built on first use by each (the
    /// incremental state's compiled table, the opening board, the types' dead ends):
    /// `Default::default()` when a variant is put together by hand.
    pub caches: Caches,
}

/// The three files of a variant.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    /// Text of the `.rules` file.
    pub rules: &'a str,
    /// Text of the `.pieces` file (the piece table).
    pub pieces: &'a str,
    /// Text of the `.setup` file (Black's ranks, farthest first).
    pub setup: &'a str,
}

/// The three files of built-in variant `name`, read into the binary.
macro_rules! built_in {
    ($name:literal) => {
        (
            $name,
            Sources {
                rules: include_str!(concat!("../variants/", $name, ".rules")),
                pieces: include_str!(concat!("../variants/", $name, ".pieces")),
                setup: include_str!(concat!("../variants/", $name, ".setup")),
            },
        )
    };
}

const BUILT_IN: &[(&str, Sources<'static>)] =
    &[built_in!("taikyoku"), built_in!("daidai"), built_in!("tenjiku"), built_in!("taishin")];

/// The variants loaded at run time (`Variant::register`), in loading order. Their files are kept
/// for the life of the process, as the built-in ones are: a name always means the same rules.
static LOADED: RwLock<Vec<(&'static str, Sources<'static>)>> = RwLock::new(Vec::new());

fn loaded() -> std::sync::RwLockReadGuard<'static, Vec<(&'static str, Sources<'static>)>> {
    LOADED.read().unwrap_or_else(|e| e.into_inner())
}

/// Names of the variants this process knows: the built-in ones, then those loaded from files.
pub fn variant_names() -> Vec<&'static str> {
    BUILT_IN.iter().chain(loaded().iter()).map(|(name, _)| *name).collect()
}

/// Names of the variants compiled into this build.
pub fn built_in_variant_names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(name, _)| *name).collect()
}

/// The three files of a known variant (`name` in lower case).
pub fn variant_sources(name: &str) -> Option<(&'static str, Sources<'static>)> {
    let lower = name.to_ascii_lowercase();
    BUILT_IN.iter().find(|(n, _)| *n == lower).copied().or_else(|| loaded().iter().find(|(n, _)| *n == lower).copied())
}

/// Whether `name` can name a variant: lower-case ASCII letters, digits, `_` and `-`, starting with
/// a letter, at most 32 characters (it becomes a file stem, a dataset field and a Gym id).
fn is_variant_name(name: &str) -> bool {
    name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// Why a variant could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantError {
    /// No built-in variant has this name.
    UnknownVariant(String),
    /// The rules file is invalid.
    Rules(RulesError),
    /// The piece table is invalid.
    Table(TableError),
    /// The setup does not fit the board or the table (the message names the line where there
    /// is one).
    Setup(String),
    /// A variant loaded from files cannot take this name or Gym id (the message says why).
    Name(String),
    /// A variant's file could not be read.
    Io {
        /// The file.
        path: String,
        /// The operating system's error number, when it gave one.
        errno: Option<i32>,
        /// What went wrong.
        message: String,
    },
    /// A rule option the variant does not offer.
    UnknownOption {
        /// The variant's name.
        variant: String,
        /// The option asked for.
        option: String,
        /// The options it offers (its rules file's, then its piece table's).
        known: Vec<String>,
    },
}

impl std::fmt::Display for VariantError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VariantError::UnknownVariant(name) => {
                write!(f, "unknown variant '{name}' (known: {})", variant_names().join(", "))
            }
            VariantError::Rules(e) => write!(f, "{e}"),
            VariantError::Table(e) => write!(f, "{e}"),
            VariantError::Setup(m) => write!(f, "setup: {m}"),
            VariantError::Name(m) => write!(f, "{m}"),
            VariantError::Io { path, message, .. } => write!(f, "cannot read {path}: {message}"),
            VariantError::UnknownOption { variant, option, known } if known.is_empty() => {
                write!(f, "unknown rule option '{option}': {variant} has no rule options")
            }
            VariantError::UnknownOption { variant, option, known } => {
                write!(f, "unknown rule option '{option}' for {variant}; its options: {}", known.join(", "))
            }
        }
    }
}

impl std::error::Error for VariantError {}

impl Variant {
    /// Loads a built-in variant with the given rule options (see `PieceTable::options`).
    ///
    /// Each (variant, options) pair is parsed once per process and shared: a new game costs
    /// microseconds, not a parse of the piece table.
    pub fn load(name: &str, options: &[String]) -> Result<Arc<Variant>, VariantError> {
        type Cache = Mutex<HashMap<(String, Vec<String>), Arc<Variant>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let (name, sources) = variant_sources(name).ok_or_else(|| VariantError::UnknownVariant(name.to_string()))?;
        let mut sorted = options.to_vec();
        sorted.sort();
        sorted.dedup();
        let key = (name.to_string(), sorted);
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(variant) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(variant.clone());
        }
        // Parsed outside the lock: two threads may both parse a new pair; the first one wins.
        let variant = Arc::new(Variant::from_sources(name, sources, &key.1)?);
        Ok(cache.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(variant).clone())
    }

    /// Builds a variant from its three files (a built-in one, or one being written: this is the
    /// check mode, see `check`).
    pub fn from_sources(name: &str, sources: Sources, options: &[String]) -> Result<Variant, VariantError> {
        let (rules, rules_options) = Rules::parse_with_options(sources.rules, options).map_err(VariantError::Rules)?;
        // The piece table claims (and checks) the options the rules file does not offer.
        let table_options: Vec<String> =
            options.iter().filter(|o| !rules_options.iter().any(|r| &r.name == *o)).cloned().collect();
        let table = PieceTable::parse(sources.pieces, &table_options).map_err(VariantError::Table)?;
        if let Some((name, _)) = table.options.iter().find(|(n, _)| rules_options.iter().any(|r| &r.name == n)) {
            return Err(VariantError::Rules(RulesError {
                line: 0,
                message: format!("option '{name}' is offered by both the rules file and the piece table"),
            }));
        }
        let known: Vec<String> =
            rules_options.iter().map(|r| r.name.clone()).chain(table.options.iter().map(|(n, _)| n.clone())).collect();
        if let Some(option) = options.iter().find(|o| !known.contains(o)) {
            return Err(VariantError::UnknownOption { variant: name.to_string(), option: option.clone(), known });
        }
        let geometry = Geometry::new(rules.width, rules.height);
        let setup_error = |line: usize, message: String| VariantError::Setup(format!("line {line}: {message}"));
        let rows: Vec<(usize, Vec<&str>)> = sources
            .setup
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|(n, l)| (n + 1, l.split_whitespace().collect()))
            .collect();
        if rows.len() > geometry.height / 2 {
            return Err(VariantError::Setup(format!(
                "{} ranks of pieces for one side on a board of {} ranks: the sides would overlap",
                rows.len(),
                geometry.height
            )));
        }
        let first_row = geometry.height - rows.len();
        let mut setup = Vec::new();
        for (r, (line, row)) in rows.iter().enumerate() {
            if row.len() != geometry.width {
                return Err(setup_error(
                    *line,
                    format!("{} cells, the board is {} files wide", row.len(), geometry.width),
                ));
            }
            for (x, cell) in row.iter().enumerate() {
                if *cell == "." {
                    continue;
                }
                let kind = table.by_key(cell).ok_or_else(|| setup_error(*line, format!("unknown piece '{cell}'")))?;
                if table.get(kind).promoted_only {
                    return Err(setup_error(*line, format!("'{cell}' only appears by promotion")));
                }
                setup.push(((first_row + r) * geometry.width + x, kind));
            }
        }
        if !setup.iter().any(|&(_, kind)| table.get(kind).royal) {
            return Err(VariantError::Setup("no royal piece: a side could never lose by royal capture".into()));
        }
        let mut options = options.to_vec();
        options.sort();
        let mut table = table;
        if rules.zone().is_some() {
            table.mark_zone_promotion();
        }
        let variant = Variant {
            name: name.to_string(),
            rules,
            geometry,
            table,
            setup,
            options,
            rules_options,
            caches: Caches::default(),
        };
        Ok(variant)
    }

    /// Makes a variant of three files known to this process under `name`, as a built-in one is:
    /// `Variant::load(name)` and `variant_names()` then find it. The files are checked first, with
    /// every rule option (`check`). A built-in name, a Gym id another variant has, or a name
    /// already loaded with other files is refused; loading the same files again is a no-op.
    /// Returns the name, in lower case.
    pub fn register(name: &str, sources: Sources) -> Result<&'static str, VariantError> {
        let name = name.to_ascii_lowercase();
        if !is_variant_name(&name) {
            return Err(VariantError::Name(format!(
                "'{name}' cannot name a variant: lower-case letters, digits, '_' and '-', starting with a letter, at \
                 most 32 characters (the name is the rules file's name)"
            )));
        }
        if BUILT_IN.iter().any(|(n, _)| *n == name) {
            return Err(VariantError::Name(format!(
                "'{name}' is a built-in variant: give the files of a variant loaded from files another name"
            )));
        }
        // One registration at a time: the checks below read the list, the push writes it.
        static REGISTERING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((known, old)) = variant_sources(&name) {
            if (old.rules, old.pieces, old.setup) == (sources.rules, sources.pieces, sources.setup) {
                return Ok(known);
            }
            return Err(VariantError::Name(format!(
                "a variant '{name}' with other files is already loaded in this process (games and caches hold it): \
                 give the new files another name"
            )));
        }
        let variant = Variant::from_sources(&name, sources, &[])?;
        Variant::check(&name, sources)?;
        let gym_id = variant.gym_id();
        for other in variant_names() {
            if Variant::load(other, &[]).is_ok_and(|v| v.gym_id().eq_ignore_ascii_case(&gym_id)) {
                return Err(VariantError::Name(format!(
                    "gym-id '{gym_id}' is already {other}'s: give the rules file another 'gym-id' line"
                )));
            }
        }
        // Kept for the life of the process, as the built-in files are (a few hundred KB at most).
        let keep = |text: &str| -> &'static str { Box::leak(text.to_string().into_boxed_str()) };
        let name: &'static str = keep(&name);
        let sources = Sources { rules: keep(sources.rules), pieces: keep(sources.pieces), setup: keep(sources.setup) };
        LOADED.write().unwrap_or_else(|e| e.into_inner()).push((name, sources));
        Ok(name)
    }

    /// Loads a variant from its rules file and the `.pieces` and `.setup` files beside it (same
    /// name, other extension) and makes it known under the files' name (`register`).
    pub fn load_files(rules_path: &Path) -> Result<&'static str, VariantError> {
        if rules_path.extension().and_then(|e| e.to_str()) != Some("rules") {
            return Err(VariantError::Name(format!(
                "{} is not a .rules file (a variant is NAME.rules, NAME.pieces and NAME.setup side by side)",
                rules_path.display()
            )));
        }
        let read = |extension: &str| {
            let path = rules_path.with_extension(extension);
            std::fs::read_to_string(&path).map_err(|e| VariantError::Io {
                path: path.display().to_string(),
                errno: e.raw_os_error(),
                message: e.to_string(),
            })
        };
        let (rules, pieces, setup) = (read("rules")?, read("pieces")?, read("setup")?);
        let name = rules_path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        Variant::register(name, Sources { rules: &rules, pieces: &pieces, setup: &setup })
    }

    /// The variant's name for people: the rules file's `title`, or its name.
    pub fn title(&self) -> String {
        self.rules.title.clone().unwrap_or_else(|| self.name.clone())
    }

    /// The variant's Gymnasium id without the `taikyoku/` namespace: the rules file's `gym-id`,
    /// or its name capitalised with version 0 (`custom` -> `Custom-v0`).
    pub fn gym_id(&self) -> String {
        self.rules.gym_id.clone().unwrap_or_else(|| {
            let mut chars = self.name.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase().to_string()).unwrap_or_default();
            format!("{first}{}-v0", chars.as_str())
        })
    }

    /// Whether the variant was compiled in (not loaded from files at run time).
    pub fn is_built_in(&self) -> bool {
        BUILT_IN.iter().any(|(n, _)| *n == self.name)
    }

    /// Check mode: loads a variant's three files and reports what it found, or the first error
    /// (with its file and line).
    pub fn check(name: &str, sources: Sources) -> Result<String, VariantError> {
        let variant = Variant::from_sources(name, sources, &[])?;
        for (option, _) in variant.rule_options() {
            Variant::from_sources(name, sources, &[option])?;
        }
        let promoted_only = variant.table.types.iter().filter(|t| t.promoted_only).count();
        Ok(format!(
            "{name}: {}x{} board, {} piece types ({promoted_only} promoted-only), {} pieces a side, {} rule options",
            variant.geometry.width,
            variant.geometry.height,
            variant.table.len(),
            variant.setup.len(),
            variant.rule_options().len()
        ))
    }

    /// Every rule option the variant offers, as (name, what it changes): a piece key for the
    /// table's options (one pair per piece), a rules-file key for the rules file's.
    pub fn rule_options(&self) -> Vec<(String, String)> {
        let rules = self.rules_options.iter().map(|o| (o.name.clone(), o.key.clone()));
        self.table.options.iter().cloned().chain(rules).collect()
    }

    /// The square that `sq` becomes for White's setup (rotated by 180°).
    pub fn rotate(&self, sq: usize) -> usize {
        self.geometry.size() - 1 - sq
    }

    /// The initial pieces of both sides.
    pub fn initial_pieces(&self) -> impl Iterator<Item = (usize, Kind, Color)> + '_ {
        self.setup
            .iter()
            .map(|&(sq, k)| (sq, k, Color::Black))
            .chain(self.setup.iter().map(|&(sq, k)| (self.rotate(sq), k, Color::White)))
    }
}
