//! The sites of a def's type errors: their ranges (through the def's source map, from
//! the start of its stretch of text, as `weft_hir::def_diagnostics` gives them) and
//! short quotes of their source, which messages name them by.

use weft_hir::{BodySourceMap, Db, DefId, DefLoc, Site, SourceFile};
use weft_syntax::TextRange;

use crate::RelatedInfo;

pub(super) struct Sites<'a> {
    file: SourceFile,
    source_map: &'a BodySourceMap,
    text: &'a str,
}

impl<'a> Sites<'a> {
    pub(super) fn new(db: &'a dyn Db, file: SourceFile, def: &DefLoc) -> Sites<'a> {
        let id = DefId::new(db, def.clone());
        let (_, source_map) = weft_hir::body_with_source_map(db, id);
        let text = weft_hir::def_item(db, id).map_or("", |item| item.text(db));
        Sites { file, source_map, text }
    }

    pub(super) fn range(&self, site: &Site) -> TextRange {
        self.source_map.site_range(site)
    }

    /// The source text of a site if it is short enough to quote.
    pub(super) fn quote(&self, site: &Site) -> Option<String> {
        let range = self.range(site);
        let text = self.text.get(usize::from(range.start())..usize::from(range.end()))?;
        (text.len() <= 40 && !text.contains('\n')).then(|| text.to_owned())
    }

    /// How a message names a site: its quoted text, or "this expression".
    pub(super) fn subject(&self, site: &Site) -> String {
        self.quote(site).map_or("this expression".to_owned(), |t| format!("`{t}`"))
    }

    /// Another place that explains the diagnostic (in the positions of the def's stretch).
    pub(super) fn related(&self, site: &Site, message: String) -> RelatedInfo {
        RelatedInfo { file: self.file, range: self.range(site), message }
    }
}
