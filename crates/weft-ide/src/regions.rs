//! Regions in hovers: where an array binding's memory lives (host or device), its
//! size in the source's size names, its lifetime in source lines and the transfers
//! that move it ([`weft_lower::regions`], `weft dump --ir regions`).
//!
//! [`entry_regions`] is a salsa query over one entry, compiled without source positions
//! like `entry_kernels` (position-independent: moving text re-runs nothing); lines are
//! resolved from origins through the current source maps when a hover asks. Like the
//! kernel lines, only the two smallest entries using the def are compiled for a hover,
//! never for diagnostics.

use std::sync::Arc;

use weft_core::Origin;
use weft_hir::{Db, DefId, DefLoc, ExprId, RootDatabase};
use weft_lower::regions::{Direction, Region, RegionKind, Regions, World};

use crate::classify::{Definition, search_scope};
use crate::kernels::{Budget, def_users};

/// The regions of one entry, from its one compilation (`kernels::entry_backend`); `None`
/// when its file has errors, it is not an entry or the back end refused it.
pub(crate) fn entry_regions<'db>(db: &'db dyn Db, entry: DefId<'db>) -> &'db Option<Arc<Regions>> {
    &crate::kernels::entry_backend(db, entry).regions
}

/// A region found for a binding, with its entry's regions (for its transfers).
pub(crate) struct FoundRegion {
    pub(crate) entry: String,
    pub(crate) regions: Arc<Regions>,
    pub(crate) index: usize,
}

/// The device or host regions holding the value of an expression of `def` accepted by
/// `wanted`, or (for an entry's parameter `param`) that input, in the entries using
/// `def`, smallest first, within `budget`.
pub(crate) fn regions_of(
    db: &RootDatabase,
    def: &DefLoc,
    wanted: &dyn Fn(ExprId) -> bool,
    param: Option<&str>,
    budget: Budget,
) -> Vec<FoundRegion> {
    let mut files = search_scope(db, &Definition::Def(def.clone()));
    files.sort_by_key(|&file| (file != def.file, file.path(db).clone()));
    let mut out = Vec::new();
    let mut n_compiled = 0;
    for file in files {
        for (entry, size) in def_users(db, file).of(def) {
            if *size > budget.max_size || n_compiled >= budget.max_entries {
                continue;
            }
            n_compiled += 1;
            let Some(regions) = entry_regions(db, DefId::new(db, entry.clone())) else { continue };
            for (index, region) in regions.regions.iter().enumerate() {
                let by_origin = region.kind != RegionKind::Result
                    && region.origin.as_ref().is_some_and(|o| o.def == *def && wanted(o.expr));
                let by_param = region.kind == RegionKind::Input
                    && region.world == World::Device
                    && entry == def
                    && param == Some(region.name.as_str());
                if by_origin || by_param {
                    out.push(FoundRegion {
                        entry: entry.name.to_string(),
                        regions: Arc::clone(regions),
                        index,
                    });
                }
            }
        }
    }
    out
}

/// The 1-based line of an expression, when it is in `file`.
fn line_of(db: &RootDatabase, file: weft_hir::SourceFile, origin: &Origin) -> Option<u32> {
    if origin.def.file != file {
        return None;
    }
    let source_map = weft_hir::source_map(db, DefId::new(db, origin.def.clone()));
    let range = source_map.expr_range(origin.expr)?;
    let line = crate::line_index(db, file).to_chars(file.text(db), range.start()).line;
    Some(line + 1)
}

/// `**Region**: `r4` on the device, `4*n` bytes (`n` × f32), live lines 2–3 (plan steps 1
/// to the read-back); read back to the host after the last step`.
pub(crate) fn describe_region(db: &RootDatabase, def: &DefLoc, found: &FoundRegion) -> String {
    let regions = &found.regions;
    let r: &Region = &regions.regions[found.index];
    let line = |o: &Origin| line_of(db, def.file, o);
    let plan = weft_lower::regions::lifetime(r, regions.n_steps);
    let live = match weft_lower::regions::lines(r, &line) {
        Some((a, b)) if a == b => format!("line {a} (plan: {plan})"),
        Some((a, b)) => format!("lines {a}–{b} (plan: {plan})"),
        None => format!("{plan} of the plan (no kernel of this file uses it)"),
    };
    let world = match r.world {
        World::Host => "the host",
        World::Device => "the device",
    };
    let mut text = format!(
        "**Region**: `r{}`{} on {world}, `{}` bytes (`{}` × {}), live {live}",
        r.id,
        if r.name.is_empty() { String::new() } else { format!(" (`{}`)", r.name) },
        r.bytes,
        r.len,
        r.elem.name(),
    );
    for t in &regions.transfers {
        let r_id = r.id;
        if t.to == Some(r_id) && t.direction == Direction::HostToDevice {
            text.push_str(&format!("; uploaded from the host (`{}` bytes)", t.bytes));
        } else if t.from == r_id && t.direction == Direction::DeviceToHost {
            match t.to {
                Some(_) => text.push_str(&format!("; read back to the host (`{}` bytes)", t.bytes)),
                None => text.push_str(&format!("; {} bytes read by the host", t.bytes)),
            }
        }
    }
    if !r.kernels.is_empty() {
        let shown: Vec<String> = r.kernels.iter().take(3).map(|k| format!("`{k}`")).collect();
        let more = r.kernels.len().saturating_sub(3);
        text.push_str(&format!(
            "; used by {}{}",
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    text.push_str(&format!(" (entry `{}`)", found.entry));
    text
}
