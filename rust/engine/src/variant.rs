//! Variants: board size, piece table and setup, all data.

use crate::geometry::{Color, Geometry};
use crate::table::{Kind, PieceTable, TableError};
use std::sync::Arc;

/// A variant with its rule options applied.
#[derive(Debug)]
pub struct Variant {
    pub name: String,
    pub geometry: Geometry,
    pub table: PieceTable,
    /// Black's initial pieces as (square, kind); White's are these rotated by 180°.
    pub setup: Vec<(usize, Kind)>,
    pub options: Vec<String>,
}

struct Source {
    name: &'static str,
    size: usize,
    pieces: &'static str,
    setup: &'static str,
}

const SOURCES: &[Source] = &[Source {
    name: "taikyoku",
    size: 36,
    pieces: include_str!("../variants/taikyoku.pieces"),
    setup: include_str!("../variants/taikyoku.setup"),
}];

/// Names of the variants this build knows.
pub fn variant_names() -> Vec<&'static str> {
    SOURCES.iter().map(|s| s.name).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantError {
    UnknownVariant(String),
    Table(TableError),
    Setup(String),
}

impl std::fmt::Display for VariantError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VariantError::UnknownVariant(name) => {
                write!(f, "unknown variant '{name}' (known: {})", variant_names().join(", "))
            }
            VariantError::Table(e) => write!(f, "{e}"),
            VariantError::Setup(m) => write!(f, "setup: {m}"),
        }
    }
}

impl std::error::Error for VariantError {}

impl Variant {
    /// Loads a built-in variant with the given rule options (see `PieceTable::options`).
    pub fn load(name: &str, options: &[String]) -> Result<Arc<Variant>, VariantError> {
        let source = SOURCES
            .iter()
            .find(|s| s.name == name.to_ascii_lowercase())
            .ok_or_else(|| VariantError::UnknownVariant(name.to_string()))?;
        let table = PieceTable::parse(source.pieces, options).map_err(VariantError::Table)?;
        let geometry = Geometry::new(source.size, source.size);
        let rows: Vec<Vec<&str>> = source
            .setup
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|l| l.split_whitespace().collect())
            .collect();
        let first_row = geometry.height - rows.len();
        let mut setup = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            if row.len() != geometry.width {
                return Err(VariantError::Setup(format!("row {} has {} cells", r + 1, row.len())));
            }
            for (x, cell) in row.iter().enumerate() {
                if *cell == "." {
                    continue;
                }
                let kind =
                    table.by_key(cell).ok_or_else(|| VariantError::Setup(format!("unknown piece '{cell}'")))?;
                setup.push(((first_row + r) * geometry.width + x, kind));
            }
        }
        let mut options = options.to_vec();
        options.sort();
        Ok(Arc::new(Variant { name: source.name.to_string(), geometry, table, setup, options }))
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
