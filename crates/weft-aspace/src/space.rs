//! Address spaces and bitsets of them.
//!
//! The four labels have fixed IDs (digest 3.8, "fixed IDs are recommended"): `global = 0`,
//! `local = 1`, `private = 2`, `constant = 3`. `constant` is the fourth label the paper leaves out
//! (digest 2.2, 8.2). The ID order is also the order used for evidence ranks (digest E11) and for
//! printing; nothing else depends on it (digest 8.22).

use std::fmt;

/// One OpenCL address space. `generic` is deliberately not a label (digest 8.1): an undetermined
/// space is a row variable, and an OpenCL 2.0 generic pointer is [`crate::Resolved::Generic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Space {
    Global,
    Local,
    Private,
    Constant,
}

impl Space {
    /// All labels in ID order.
    pub const ALL: [Space; 4] = [Space::Global, Space::Local, Space::Private, Space::Constant];

    /// The fixed runtime ID (the jump-table index of digest 3.9).
    pub fn id(self) -> u32 {
        match self {
            Space::Global => 0,
            Space::Local => 1,
            Space::Private => 2,
            Space::Constant => 3,
        }
    }

    /// The OpenCL C keyword without underscores: `global`, `local`, `private`, `constant`.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Local => "local",
            Space::Private => "private",
            Space::Constant => "constant",
        }
    }

    /// The one-letter tag used in clone names (`dot__G_L`).
    pub fn letter(self) -> char {
        match self {
            Space::Global => 'G',
            Space::Local => 'L',
            Space::Private => 'P',
            Space::Constant => 'C',
        }
    }

    fn bit(self) -> u8 {
        1 << self.id()
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of address spaces, as a bitset indexed by [`Space::id`].
///
/// Invariant: only the low four bits are ever set (every constructor masks).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SpaceSet(u8);

impl SpaceSet {
    pub const EMPTY: SpaceSet = SpaceSet(0);
    pub const ALL: SpaceSet = SpaceSet(0b1111);
    /// Spaces a store may write: all but `constant` (digest 2.10 [STORE]).
    pub const WRITABLE: SpaceSet = SpaceSet(0b0111);
    /// Spaces a kernel pointer parameter may have (digest 2.10 [KERNEL]).
    pub const KERNEL_PARAM: SpaceSet = SpaceSet(0b1011);

    /// The set with exactly the bits of `bits` (masked to the four labels).
    pub fn from_bits(bits: u8) -> SpaceSet {
        SpaceSet(bits & 0b1111)
    }

    pub fn bits(self) -> u8 {
        self.0
    }

    pub fn single(space: Space) -> SpaceSet {
        SpaceSet(space.bit())
    }

    pub fn contains(self, space: Space) -> bool {
        self.0 & space.bit() != 0
    }

    pub fn insert(&mut self, space: Space) {
        self.0 |= space.bit();
    }

    pub fn remove(&mut self, space: Space) {
        self.0 &= !space.bit();
    }

    pub fn with(self, space: Space) -> SpaceSet {
        SpaceSet(self.0 | space.bit())
    }

    pub fn union(self, other: SpaceSet) -> SpaceSet {
        SpaceSet(self.0 | other.0)
    }

    pub fn intersect(self, other: SpaceSet) -> SpaceSet {
        SpaceSet(self.0 & other.0)
    }

    /// `self \ other`.
    pub fn minus(self, other: SpaceSet) -> SpaceSet {
        SpaceSet(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn is_subset(self, other: SpaceSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The only element, if there is exactly one.
    pub fn is_singleton(self) -> Option<Space> {
        let mut iter = self.iter();
        match (iter.next(), iter.next()) {
            (Some(space), None) => Some(space),
            _ => None,
        }
    }

    /// The smallest element by ID.
    pub fn first(self) -> Option<Space> {
        self.iter().next()
    }

    /// Elements in ID order.
    pub fn iter(self) -> impl Iterator<Item = Space> {
        Space::ALL.into_iter().filter(move |space| self.contains(*space))
    }

    /// Clone-name letters in ID order, e.g. `GL`.
    pub fn letters(self) -> String {
        self.iter().map(Space::letter).collect()
    }

    /// Human wording for messages: `global memory`, `global or local memory`, `no memory`.
    pub fn describe(self) -> String {
        let names: Vec<&str> = self.iter().map(Space::name).collect();
        match names.split_last() {
            None => "no address space".to_owned(),
            Some((last, [])) => format!("{last} memory"),
            Some((last, rest)) => format!("{} or {last} memory", rest.join(", ")),
        }
    }
}

impl FromIterator<Space> for SpaceSet {
    fn from_iter<I: IntoIterator<Item = Space>>(iter: I) -> SpaceSet {
        let mut set = SpaceSet::EMPTY;
        for space in iter {
            set.insert(space);
        }
        set
    }
}

impl fmt::Display for SpaceSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (idx, space) in self.iter().enumerate() {
            if idx > 0 {
                f.write_str(", ")?;
            }
            f.write_str(space.name())?;
        }
        f.write_str("}")
    }
}

impl fmt::Debug for SpaceSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
