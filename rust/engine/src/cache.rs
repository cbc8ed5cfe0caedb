//! Values derived from a variant by the modules above it, kept with the variant
//! (`Variant::caches`) and built on first use by the module that owns each: the incremental
//! state's compiled table (`incremental`), the opening board (`position`), the types' dead ends
//! (`movegen`). The variant holds them without naming their types, so it imports none of those
//! modules: no import cycle.

use std::any::Any;
use std::fmt;
use std::sync::OnceLock;

/// One value, of a type its owner picks, built once.
#[derive(Default)]
pub(crate) struct Slot(OnceLock<Box<dyn Any + Send + Sync>>);

impl Slot {
    /// The value, built by `init` on first use. A slot has one owner, which always asks for the
    /// same type.
    #[inline]
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(|| Box::new(init())).downcast_ref().expect("a slot holds its owner's type")
    }
}

/// The caches a variant carries for the modules that derive values from it. A variant put
/// together by hand starts with `Caches::default()`; nothing outside the engine reads them.
#[derive(Default)]
pub struct Caches {
    /// The incremental move state's `Compiled` table (`incremental::program`).
    pub(crate) move_state: Slot,
    /// The opening position's board (`position::OpeningBoard`).
    pub(crate) opening_board: Slot,
    /// Per piece type, the ranks where it would have no move (`movegen::dead_ends`): typed,
    /// as the generator reads it for every piece that may promote in a zone.
    pub(crate) dead_ends: OnceLock<Vec<u64>>,
}

impl fmt::Debug for Caches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = |slot: &Slot| if slot.0.get().is_some() { "built" } else { "not built" };
        f.debug_struct("Caches")
            .field("move_state", &built(&self.move_state))
            .field("opening_board", &built(&self.opening_board))
            .field("dead_ends", &self.dead_ends.get())
            .finish()
    }
}
