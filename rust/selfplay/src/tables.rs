//! The two tables (datasets/README.md): their Arrow schemas, record batches built from game
//! records, and shard files written as Arrow IPC or Parquet.

use crate::play::{GameRecord, PositionRecord};
use crate::settings::{Format, Settings};
use arrow_array::builder::{ListBuilder, StringBuilder, UInt32Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt16Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, Float32Array, Int8Array, ListArray, RecordBatch, StringArray,
    StructArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::OffsetBuffer;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use arrow_schema::{ArrowError, DataType, Field, Fields, Metadata, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use taikyoku_engine::rl::actions::GRID_SQUARES;

/// The engine version datasets are labelled with.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Counts of a shard, or of a whole dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Rows in the games table.
    pub games: u64,
    /// Rows in the positions table: the plies of all the games.
    pub positions: u64,
    /// Games Black won.
    pub black_wins: u64,
    /// Games White won.
    pub white_wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games truncated by `max_plies` (no result).
    pub truncated: u64,
    /// Bytes on disk: the games and positions files together.
    pub bytes: u64,
}

impl Tally {
    /// Adds `other`'s counts to these, field by field.
    pub fn add(&mut self, other: &Tally) {
        self.games += other.games;
        self.positions += other.positions;
        self.black_wins += other.black_wins;
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.truncated += other.truncated;
        self.bytes += other.bytes;
    }

    /// The counts as messages give them.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} games, {} positions, Black {}, White {}, draws {}, truncated {}",
            self.games, self.positions, self.black_wins, self.white_wins, self.draws, self.truncated
        )
    }

    /// The counts of some games (`bytes` zero).
    pub fn of<'a>(results: impl Iterator<Item = (Option<&'a str>, u64)>) -> Tally {
        let mut tally = Tally::default();
        for (result, plies) in results {
            tally.games += 1;
            tally.positions += plies;
            match result {
                Some("black") => tally.black_wins += 1,
                Some("white") => tally.white_wins += 1,
                Some(_) => tally.draws += 1,
                None => tally.truncated += 1,
            }
        }
        tally
    }
}

/// Version of the layout below; bumped on any incompatible change. 2: the action space gained
/// the promotion block (Tenjiku's promotion choice, `NUM_ACTIONS` doubled); the columns did not
/// change, and a version-1 dataset reads as it is (its actions all lie below `PROMOTION_BLOCK`
/// and keep their meaning). 3: the positions table may end with a `legal_actions` column (when
/// the settings say `store_legal_actions`), which a version-2 reader would refuse as an unknown
/// schema; without it the files are laid out as in version 2, which reads as it is. 4: the
/// positions table gained `passes` and `opponent_passes` after `repetitions` (Taishin's limit
/// on passes in a row); a version 1-3 positions file lacks them, and reads as zeros. 5: the
/// positions table may end with a `policy` column (runs with a Gumbel root), which a version-4
/// reader would refuse; without it the files are laid out as in version 4.
pub const SCHEMA_VERSION: u32 = 5;

/// The manifest versions this build reads (writing always uses `SCHEMA_VERSION`).
pub const READABLE_SCHEMA_VERSIONS: [u32; 5] = [1, 2, 3, 4, 5];

/// Rows per record batch (Arrow IPC) and per row group (Parquet), at most: a shard's rows are
/// cut into batches of this many whatever the games' lengths (the last batch of a file holds
/// the rest), so a reader can stream a file in pieces of a few megabytes (a positions row takes
/// 2.6 KB uncompressed, mostly its board).
pub const ROWS_PER_BATCH: usize = 4096;

/// The optional positions column of each position's legal actions.
pub const LEGAL_ACTIONS: &str = "legal_actions";

/// The optional positions column of a Gumbel root's improved policy.
pub const POLICY: &str = "policy";

/// Key of each field's description in its Arrow field metadata.
pub const DESCRIPTION: &str = "description";

/// Keys of the schema-level metadata every shard file carries (datasets/README.md §2): the
/// file says what it is without its manifest. The same for every shard of a run, so tables
/// concatenated from several shards keep it.
pub mod keys {
    /// The layout version (`SCHEMA_VERSION`), in decimal.
    pub const SCHEMA_VERSION: &str = "taikyoku.schema_version";
    /// The engine version that wrote the file, e.g. `"0.1.0"`.
    pub const ENGINE_VERSION: &str = "taikyoku.engine_version";
    /// `"games"` or `"positions"`.
    pub const TABLE: &str = "taikyoku.table";
    /// What a row is, in words.
    pub const DESCRIPTION: &str = "taikyoku.description";
    /// The variant name, as in the settings.
    pub const VARIANT: &str = "taikyoku.variant";
    /// The run's settings as JSON (the manifest's `settings`).
    pub const SETTINGS: &str = "taikyoku.settings";
}

/// The compact board code, in words (the `board` field's description and the dataset card).
pub const BOARD_CODE: &str = "36x36 squares, row-major, always Black's (absolute) view: row 0 is rank a, \
column 0 is file 36. Code 0: empty; else (kind + 1) << 2 | promoted << 1 | color, kind indexing \
taikyoku.piece_types(variant) (the type it moves as now), promoted 0/1, color 0 Black / 1 White";

fn described(name: &str, data_type: DataType, nullable: bool, description: &str) -> Field {
    Field::new(name, data_type, nullable).with_metadata(Metadata::from([(DESCRIPTION, description)]))
}

fn visit_fields() -> Fields {
    Fields::from(vec![Field::new("action", DataType::UInt32, false), Field::new("count", DataType::UInt32, false)])
}

fn policy_fields() -> Fields {
    Fields::from(vec![Field::new("action", DataType::UInt32, false), Field::new("weight", DataType::Float32, false)])
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, false)))
}

/// games: one row per game.
pub fn games_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            Arc::new(Schema::new(vec![
                described("game_id", DataType::UInt64, false, "index of the game in the run, 0 to games - 1; joins the positions"),
                described("seed", DataType::UInt64, false, "the game's seed: splitmix64(master seed ^ splitmix64(game_id))"),
                described("variant", DataType::Utf8, false, "variant name (taikyoku.variants())"),
                described("black_player", DataType::Utf8, false, "'random' or 'mcts'"),
                described("white_player", DataType::Utf8, false, "'random' or 'mcts'"),
                described("result", DataType::Utf8, true, "'black', 'white' or 'draw'; null when truncated by max_plies"),
                described(
                    "termination",
                    DataType::Utf8,
                    false,
                    "royal_capture, repetition, perpetual_check, no_moves or max_plies",
                ),
                described("plies", DataType::UInt32, false, "moves played (half-moves)"),
                described(
                    "actions",
                    list_of(DataType::UInt32),
                    false,
                    "the moves as actions (docs/ACTIONS.md), each in its mover's frame (board turned 180 degrees for White)",
                ),
                described("moves", list_of(DataType::Utf8), false, "the moves in notation, as Game.history() gives them"),
            ]))
        })
        .clone()
}

/// positions: one row per position a move was played from (without the optional columns:
/// `positions_schema_with`).
pub fn positions_schema() -> SchemaRef {
    positions_schema_with(false, false)
}

/// The positions schema, ending with the optional columns: `legal_actions` when `legal_actions`
/// is set (runs with `Settings::store_legal_actions`), then `policy` when `policy` is set (runs
/// with a Gumbel root).
pub fn positions_schema_with(legal_actions: bool, policy: bool) -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    static WITH: [OnceLock<SchemaRef>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let base = SCHEMA
        .get_or_init(|| {
            let board =
                DataType::FixedSizeList(Arc::new(Field::new("item", DataType::UInt16, false)), GRID_SQUARES as i32);
            let visits = DataType::List(Arc::new(Field::new("item", DataType::Struct(visit_fields()), false)));
            Arc::new(Schema::new(vec![
                described("game_id", DataType::UInt64, false, "the game (joins the games table)"),
                described("ply", DataType::UInt32, false, "moves played before this position, from 0"),
                described("white_to_move", DataType::Boolean, false, "side to move: true when White moves"),
                described("board", board, false, BOARD_CODE),
                described(
                    "repetitions",
                    DataType::UInt8,
                    false,
                    "earlier occurrences of this position in the game (max 255)",
                ),
                described(
                    "passes",
                    DataType::UInt8,
                    false,
                    "passes in a row by the side to move so far (variants that limit them, Taishin; else 0)",
                ),
                described(
                    "opponent_passes",
                    DataType::UInt8,
                    false,
                    "passes in a row by the other side so far (as passes)",
                ),
                described(
                    "action",
                    DataType::UInt32,
                    false,
                    "the move played, as an action in the mover's frame (board turned 180 degrees for White)",
                ),
                described("legal_moves", DataType::UInt32, false, "number of legal moves here"),
                described(
                    "visits",
                    visits,
                    false,
                    "MCTS root visit counts by action (mover's frame), sorted; empty for random players",
                ),
                described(
                    "root_value",
                    DataType::Float32,
                    true,
                    "MCTS root value for the side to move, -1 to 1 (1: it wins); null for random players",
                ),
                described(
                    "outcome",
                    DataType::Int8,
                    false,
                    "final result for the side to move: 1 win, -1 loss, 0 draw or truncated",
                ),
            ]))
        })
        .clone();
    let which = match (legal_actions, policy) {
        (false, false) => return base,
        (true, false) => 0,
        (false, true) => 1,
        (true, true) => 2,
    };
    WITH[which]
        .get_or_init(|| {
            let mut fields: Vec<Field> = base.fields().iter().map(|f| f.as_ref().clone()).collect();
            if legal_actions {
                fields.push(described(
                    LEGAL_ACTIONS,
                    list_of(DataType::UInt32),
                    false,
                    "every legal action here, sorted (mover's frame), as Game.legal_actions() gives them; \
                     stored only by runs with store_legal_actions",
                ));
            }
            if policy {
                fields.push(described(
                    POLICY,
                    DataType::List(Arc::new(Field::new("item", DataType::Struct(policy_fields()), false))),
                    false,
                    "the Gumbel root's improved policy, softmax(prior logits + sigma(completed Q)), over every legal \
                     action (mover's frame), by action, summing to 1; stored only by runs with a Gumbel root",
                ));
            }
            Arc::new(Schema::new(fields))
        })
        .clone()
}

/// The schema of a table of a run with `settings` (`"games"` or `"positions"`), without file
/// metadata: the positions hold `legal_actions` when the settings store them.
pub fn table_schema(table: &str, settings: &Settings) -> Option<SchemaRef> {
    match table {
        "positions" => Some(positions_schema_with(settings.store_legal_actions, settings.stores_policy())),
        _ => schema(table),
    }
}

/// The schema-level metadata of a `table` file of a run with `settings` (keys in `keys`).
pub fn file_metadata(table: &str, settings: &Settings) -> Metadata {
    let description = match table {
        "games" => "taikyoku self-play games, one row per game (layout: taikyoku datasets/README.md)",
        _ => "taikyoku self-play positions, one row per position a move was played from (layout: taikyoku datasets/README.md)",
    };
    Metadata::from([
        (keys::SCHEMA_VERSION, SCHEMA_VERSION.to_string()),
        (keys::ENGINE_VERSION, ENGINE_VERSION.to_string()),
        (keys::TABLE, table.to_string()),
        (keys::DESCRIPTION, description.to_string()),
        (keys::VARIANT, settings.variant.clone()),
        (keys::SETTINGS, serde_json::to_string(settings).expect("settings serialize")),
    ])
}

/// The schema of a `table` file of a run with `settings`: the table's schema with
/// `file_metadata`.
pub fn file_schema(table: &str, settings: &Settings) -> Option<SchemaRef> {
    let schema = table_schema(table, settings)?;
    Some(Arc::new(schema.as_ref().clone().with_metadata(file_metadata(table, settings))))
}

/// A table's schema by name (`"games"` or `"positions"`, without its optional column).
pub fn schema(table: &str) -> Option<SchemaRef> {
    match table {
        "games" => Some(games_schema()),
        "positions" => Some(positions_schema()),
        _ => None,
    }
}

/// A schema as an Arrow IPC stream with no batches: how other Arrow implementations (pyarrow)
/// get the one definition above instead of a copy.
pub fn schema_ipc(schema: &SchemaRef) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, schema).expect("a schema serializes");
    writer.finish().expect("an empty stream finishes");
    drop(writer);
    bytes
}

/// The games table rows of `records`.
pub fn games_batch(records: &[&GameRecord], variant: &str, player: &str) -> Result<RecordBatch, ArrowError> {
    let mut actions =
        ListBuilder::new(UInt32Builder::new()).with_field(Arc::new(Field::new("item", DataType::UInt32, false)));
    let mut moves =
        ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new("item", DataType::Utf8, false)));
    for r in records {
        actions.values().append_slice(&r.actions);
        actions.append(true);
        for m in &r.moves {
            moves.values().append_value(m);
        }
        moves.append(true);
    }
    let n = records.len();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(records.iter().map(|r| r.game_id))),
        Arc::new(UInt64Array::from_iter_values(records.iter().map(|r| r.seed))),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(variant, n))),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(player, n))),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(player, n))),
        Arc::new(records.iter().map(|r| r.result).collect::<StringArray>()),
        Arc::new(StringArray::from_iter_values(records.iter().map(|r| r.termination))),
        Arc::new(UInt32Array::from_iter_values(records.iter().map(|r| r.plies()))),
        Arc::new(actions.finish()),
        Arc::new(moves.finish()),
    ];
    RecordBatch::try_new(games_schema(), columns)
}

/// The positions table rows `rows` (positions with their games), whose boards are `boards`
/// (`GameRecord::board` of each row, one after another), with the `legal_actions` column when
/// `legal_actions` is set (each position must then hold its legal actions) and the `policy`
/// column when `policy` is set. `boards` becomes the board column without a copy
/// (`reclaim_boards` gives it back once the batch is written).
pub fn positions_batch(
    rows: &[(&GameRecord, &PositionRecord)],
    boards: Vec<u16>,
    legal_actions: bool,
    policy: bool,
) -> Result<RecordBatch, ArrowError> {
    let p = || rows.iter().map(|&(_, x)| x);
    let board_field = Arc::new(Field::new("item", DataType::UInt16, false));
    let boards = UInt16Array::from(boards);
    let board = FixedSizeListArray::try_new(board_field, GRID_SQUARES as i32, Arc::new(boards), None)?;
    let visit_actions = UInt32Array::from_iter_values(p().flat_map(|x| x.visits.iter().map(|v| v.0)));
    let visit_counts = UInt32Array::from_iter_values(p().flat_map(|x| x.visits.iter().map(|v| v.1)));
    let entries = StructArray::try_new(visit_fields(), vec![Arc::new(visit_actions), Arc::new(visit_counts)], None)?;
    let visits = ListArray::try_new(
        Arc::new(Field::new("item", DataType::Struct(visit_fields()), false)),
        OffsetBuffer::from_lengths(p().map(|x| x.visits.len())),
        Arc::new(entries),
        None,
    )?;
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|(r, _)| r.game_id))),
        Arc::new(UInt32Array::from_iter_values(p().map(|x| x.ply))),
        Arc::new(BooleanArray::from_iter(p().map(|x| Some(x.white_to_move)))),
        Arc::new(board),
        Arc::new(UInt8Array::from_iter_values(p().map(|x| x.repetitions))),
        Arc::new(UInt8Array::from_iter_values(p().map(|x| x.passes[0]))),
        Arc::new(UInt8Array::from_iter_values(p().map(|x| x.passes[1]))),
        Arc::new(UInt32Array::from_iter_values(p().map(|x| x.action))),
        Arc::new(UInt32Array::from_iter_values(p().map(|x| x.legal_moves))),
        Arc::new(visits),
        Arc::new(p().map(|x| x.root_value).collect::<Float32Array>()),
        Arc::new(Int8Array::from_iter_values(rows.iter().map(|(r, x)| r.outcome_for(x.white_to_move)))),
    ];
    if legal_actions {
        let mut lists = Vec::with_capacity(rows.len());
        for x in p() {
            let Some(list) = &x.legal_actions else {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "position at ply {} has no legal actions stored",
                    x.ply
                )));
            };
            lists.push(list.as_slice());
        }
        let values = UInt32Array::from(lists.concat());
        columns.push(Arc::new(ListArray::try_new(
            Arc::new(Field::new("item", DataType::UInt32, false)),
            OffsetBuffer::from_lengths(lists.iter().map(|l| l.len())),
            Arc::new(values),
            None,
        )?));
    }
    if policy {
        let actions = UInt32Array::from_iter_values(p().flat_map(|x| x.policy.iter().map(|v| v.0)));
        let weights = Float32Array::from_iter_values(p().flat_map(|x| x.policy.iter().map(|v| v.1)));
        let entries = StructArray::try_new(policy_fields(), vec![Arc::new(actions), Arc::new(weights)], None)?;
        columns.push(Arc::new(ListArray::try_new(
            Arc::new(Field::new("item", DataType::Struct(policy_fields()), false)),
            OffsetBuffer::from_lengths(p().map(|x| x.policy.len())),
            Arc::new(entries),
            None,
        )?));
    }
    RecordBatch::try_new(positions_schema_with(legal_actions, policy), columns)
}

/// The boards of a batch `positions_batch` built, back as the vector it was given once nothing
/// else holds the batch (else empty), to build the next batch in: 10 MB written again in
/// place instead of allocated, and the pages faulted in, for every batch.
pub fn reclaim_boards(batch: RecordBatch) -> Vec<u16> {
    let Some(boards) = batch.column_by_name("board").and_then(|b| b.as_fixed_size_list_opt()) else {
        return Vec::new();
    };
    let values = boards.values().as_primitive::<UInt16Type>().values().clone();
    drop(batch);
    values.into_inner().into_vec().unwrap_or_default()
}

/// The counts of a games file's bytes (results and plies; `bytes` zero) and its game ids, read back to check a
/// shard.
pub fn read_games_tally(data: Vec<u8>, format: Format) -> Result<(Tally, Vec<u64>), String> {
    let batches: Vec<RecordBatch> = match format {
        Format::Arrow => arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(data), None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?,
        Format::Parquet => {
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(data))
                .and_then(|b| b.build())
                .map_err(|e| e.to_string())?
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?
        }
    };
    let (mut rows, mut ids) = (Vec::new(), Vec::new());
    for batch in &batches {
        let column = |name: &str| batch.column_by_name(name).ok_or_else(|| format!("no column '{name}'"));
        let results =
            column("result")?.as_any().downcast_ref::<StringArray>().ok_or("'result' is not a string column")?;
        let plies = column("plies")?.as_any().downcast_ref::<UInt32Array>().ok_or("'plies' is not a uint32 column")?;
        let game_ids =
            column("game_id")?.as_any().downcast_ref::<UInt64Array>().ok_or("'game_id' is not a uint64 column")?;
        for i in 0..batch.num_rows() {
            let result = results.is_valid(i).then(|| results.value(i).to_string());
            rows.push((result, plies.value(i) as u64));
            ids.push(game_ids.value(i));
        }
    }
    Ok((Tally::of(rows.iter().map(|(r, p)| (r.as_deref(), *p))), ids))
}

/// Record batches of one schema encoded as a whole file in `format`: one IPC record batch per
/// batch, or Parquet row groups of at most `ROWS_PER_BATCH` rows.
pub fn encode(format: Format, schema: SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, ArrowError> {
    let mut encoder = Encoder::new(format, schema)?;
    for batch in batches {
        encoder.write(batch)?;
    }
    encoder.finish()
}

/// A file being encoded batch by batch (`encode` in steps): each batch is encoded and
/// compressed when written, so a caller holds the file's bytes and not its rows. The bytes are
/// `encode`'s for the same batches, however far apart in time they are written.
pub enum Encoder {
    /// Arrow IPC file, zstd.
    Arrow(Box<FileWriter<Vec<u8>>>),
    /// Parquet, zstd level 3.
    Parquet(Box<ArrowWriter<Vec<u8>>>),
}

impl Encoder {
    /// A file of `schema` in `format`, with its header written.
    pub fn new(format: Format, schema: SchemaRef) -> Result<Encoder, ArrowError> {
        let out = Vec::with_capacity(1 << 16);
        match format {
            Format::Arrow => {
                let options = IpcWriteOptions::default().try_with_compression(Some(CompressionType::ZSTD))?;
                Ok(Encoder::Arrow(Box::new(FileWriter::try_new_with_options(out, &schema, options)?)))
            }
            Format::Parquet => {
                // The schema's metadata also as Parquet key-value metadata, for Parquet readers that
                // do not decode the embedded Arrow schema (DuckDB's parquet_kv_metadata).
                let key_values =
                    schema.metadata().iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect::<Vec<_>>();
                // The legal actions are many distinct integers: a dictionary only doubles them (plain
                // values compress best: zstd finds the lists repeated from position to position).
                let legal = ColumnPath::from(vec![LEGAL_ACTIONS.to_string(), "list".into(), "item".into()]);
                // (The same for the improved policy's actions and weights.)
                let policy = |field: &str| {
                    ColumnPath::from(vec![POLICY.to_string(), "list".into(), "item".into(), field.into()])
                };
                let properties = WriterProperties::builder()
                    .set_column_dictionary_enabled(legal, false)
                    .set_column_dictionary_enabled(policy("action"), false)
                    .set_column_dictionary_enabled(policy("weight"), false)
                    .set_max_row_group_row_count(Some(ROWS_PER_BATCH))
                    .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
                    .set_created_by(format!("taikyoku {}", env!("CARGO_PKG_VERSION")))
                    .set_key_value_metadata((!key_values.is_empty()).then_some(key_values))
                    .build();
                Ok(Encoder::Parquet(Box::new(ArrowWriter::try_new(out, schema, Some(properties))?)))
            }
        }
    }

    /// Encodes `batch` as the file's next record batch (Parquet: rows of the next row group).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        match self {
            Encoder::Arrow(writer) => writer.write(batch),
            Encoder::Parquet(writer) => writer.write(batch).map_err(ArrowError::from),
        }
    }

    /// The whole file.
    pub fn finish(self) -> Result<Vec<u8>, ArrowError> {
        match self {
            Encoder::Arrow(mut writer) => {
                writer.finish()?;
                writer.into_inner()
            }
            Encoder::Parquet(writer) => writer.into_inner().map_err(ArrowError::from),
        }
    }
}
