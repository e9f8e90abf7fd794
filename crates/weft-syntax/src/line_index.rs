//! Converting between byte offsets and line/column positions, in UTF-8 bytes,
//! characters (for human output) and UTF-16 code units (the LSP's default).

use text_size::{TextRange, TextSize};

/// Line starts of a text, for position conversions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line.
    line_starts: Vec<TextSize>,
    len: TextSize,
}

/// A 0-based line and column. The unit of `col` depends on the conversion used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![TextSize::from(0)];
        for (offset, byte) in text.bytes().enumerate() {
            if byte == b'\n' {
                line_starts
                    .push(TextSize::try_from(offset + 1).expect("invariant: text fits in u32"));
            }
        }
        LineIndex { line_starts, len: TextSize::of(text) }
    }

    pub fn n_lines(&self) -> usize {
        self.line_starts.len()
    }

    /// The line containing `offset` and the byte range of that line (without `\n`).
    fn line_of(&self, offset: TextSize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset).saturating_sub(1)
    }

    pub fn line_range(&self, line: usize, text: &str) -> Option<TextRange> {
        let start = *self.line_starts.get(line)?;
        let end = self.line_starts.get(line + 1).map_or(self.len, |&next| next - TextSize::from(1));
        let range = TextRange::new(start, end.max(start));
        // Drop a `\r` of a CRLF line ending.
        let line_text = &text[range];
        Some(if line_text.ends_with('\r') {
            TextRange::new(start, end - TextSize::from(1))
        } else {
            range
        })
    }

    /// Line and column in UTF-16 code units (LSP). `offset` is clamped to the text.
    pub fn to_utf16(&self, text: &str, offset: TextSize) -> LineCol {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let prefix = text.get(usize::from(start)..usize::from(offset)).unwrap_or("");
        let col = prefix.chars().map(char::len_utf16).sum::<usize>();
        LineCol { line: to_u32(line), col: to_u32(col) }
    }

    /// Line and column in characters (human output).
    pub fn to_chars(&self, text: &str, offset: TextSize) -> LineCol {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let prefix = text.get(usize::from(start)..usize::from(offset)).unwrap_or("");
        LineCol { line: to_u32(line), col: to_u32(prefix.chars().count()) }
    }

    /// The byte offset of a UTF-16 position. A line or column past the end is clamped
    /// to the end of the line or text (editors send such positions).
    pub fn offset_utf16(&self, text: &str, pos: LineCol) -> TextSize {
        let Some(&start) = self.line_starts.get(pos.line as usize) else { return self.len };
        let end = self
            .line_starts
            .get(pos.line as usize + 1)
            .map_or(self.len, |&n| n - TextSize::from(1));
        let line = text.get(usize::from(start)..usize::from(end)).unwrap_or("");
        let mut units = 0u32;
        for (idx, c) in line.char_indices() {
            if units >= pos.col {
                return start + TextSize::try_from(idx).expect("invariant: text fits in u32");
            }
            units += to_u32(c.len_utf16());
        }
        end
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        let text = "ab\n€😀x\r\nlast";
        let index = LineIndex::new(text);
        let x = TextSize::try_from(text.find('x').unwrap()).unwrap();
        assert_eq!(index.to_utf16(text, x), LineCol { line: 1, col: 3 });
        assert_eq!(index.to_chars(text, x), LineCol { line: 1, col: 2 });
        assert_eq!(index.offset_utf16(text, LineCol { line: 1, col: 3 }), x);
        // Past the end of a line or file: clamped.
        assert_eq!(index.offset_utf16(text, LineCol { line: 0, col: 99 }), TextSize::from(2));
        assert_eq!(index.offset_utf16(text, LineCol { line: 9, col: 0 }), TextSize::of(text));
        assert_eq!(&text[index.line_range(1, text).unwrap()], "€😀x");
    }
}
