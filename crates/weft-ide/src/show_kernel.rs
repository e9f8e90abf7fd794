//! "Show generated kernel": the OpenCL C of the kernels that compute the code under the
//! cursor, or of a whole entry when the cursor is on its name.
//!
//! The kernels are found through [`kernels_computing`] (the source expressions each kernel
//! computes, `KernelImp::origins`): among the expressions of the def under the cursor
//! that some kernel computes, the innermost one whose range holds the cursor wins, and
//! every kernel computing it is shown (a reduction has two stages, a def called by two
//! entries is compiled in each). On a def's name: every kernel computing part of it.
//! The text is compiled again with source positions ([`compile_entry`]) and printed
//! by `weft_opencl::print_kernel`, whose first line is the kernel's doc line; a comment
//! above each kernel names its entry and the role of the expression in it.
//!
//! Every line of generated code that computes part of the source is linked to the
//! source expression it computes ([`LineLink`], from the back end's
//! `print_kernel_with_origins`), so that an editor colours the two alike and follows
//! the cursor from one to the other (Compiler Explorer's colour linking).

use rustc_hash::{FxHashMap, FxHashSet};
use weft_hir::{DefKind, DefLoc, RootDatabase, SourceFile};
use weft_syntax::{TextRange, TextSize};

use crate::FilePosition;
use crate::classify::{DefData, Definition, classify_at, enclosing_def};
use crate::kernels::{
    EXPLICIT_BUDGET, KernelSearch, KernelUse, combinator_calls, compile_entry, kernels_computing,
};

/// An entry compiled with positions, or why it cannot be (`None`: it is gone).
type Compiled = Result<weft_opencl::Compiled, String>;

/// Generated code to show in a read-only editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelView {
    /// A name for the virtual document, a relative path ending in `.cl`
    /// (`dot/dot.cl` for entry `dot` of `dot.weft`).
    pub name: String,
    pub text: String,
    /// Which lines of `text` hold each kernel and which source expressions it computes.
    pub links: Vec<KernelLink>,
    /// Per line of `text` that computes part of the source, the source expression it
    /// computes, in line order: for an editor to highlight one from the other.
    pub lines: Vec<LineLink>,
}

/// One line of a [`KernelView`] and the source expression it computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineLink {
    /// The line in the view, 0-based.
    pub line: u32,
    pub source: crate::FileRange,
}

/// Generated text being assembled, with the origin of each of its lines.
#[derive(Default)]
struct ViewText {
    text: String,
    origins: Vec<Option<weft_core::Origin>>,
}

impl ViewText {
    /// Lines computing nothing of the source (`text` ends with a newline or is empty).
    fn comment(&mut self, text: &str) {
        self.text.push_str(text);
        self.origins.resize(self.text.lines().count(), None);
    }

    fn push(&mut self, printed: weft_opencl::Printed) {
        self.text.push_str(&printed.text);
        self.origins.extend(printed.origins);
    }

    /// The [`LineLink`]s of the lines with an origin the source map finds.
    fn line_links(&self, db: &RootDatabase) -> Vec<LineLink> {
        let mut sources: FxHashMap<weft_core::Origin, Option<crate::FileRange>> =
            FxHashMap::default();
        let mut out = Vec::new();
        for (idx, origin) in self.origins.iter().enumerate() {
            let Some(origin) = origin else { continue };
            let source = sources
                .entry(origin.clone())
                .or_insert_with(|| {
                    let data = DefData::new(db, &origin.def);
                    let range = data.source_map.expr_range(origin.expr)?;
                    Some(crate::FileRange { path: origin.def.file.path(db).clone(), range })
                })
                .clone();
            if let (Some(source), Ok(line)) = (source, u32::try_from(idx)) {
                out.push(LineLink { line, source });
            }
        }
        out
    }
}

/// One kernel of a [`KernelView`] and the source it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLink {
    pub kernel: String,
    /// The kernel's lines in the view (0-based, end exclusive), from the comments
    /// directly above its signature to its closing brace.
    pub lines: std::ops::Range<u32>,
    /// The source expressions it computes (`KernelImp::origins`), each once, in order.
    pub sources: Vec<crate::FileRange>,
}

/// The [`KernelLink`]s of `text` for `kernels` (a name and the origins of each), found
/// by their `__kernel void NAME(` lines; a kernel not in the text gets none.
fn kernel_links<'a>(
    db: &RootDatabase,
    text: &str,
    kernels: impl IntoIterator<Item = (&'a str, &'a [(weft_core::Origin, String)])>,
) -> Vec<KernelLink> {
    let lines: Vec<&str> = text.lines().collect();
    let mut links = Vec::new();
    for (name, origins) in kernels {
        let signature = format!("__kernel void {name}(");
        let Some(at) = lines.iter().position(|l| l.starts_with(&signature)) else { continue };
        let start = lines[..at].iter().rposition(|l| !l.starts_with("//")).map_or(0, |i| i + 1);
        let mut depth = 0i64;
        let mut end = lines.len();
        for (i, line) in lines.iter().enumerate().skip(at) {
            let closes = line.matches('}').count();
            depth += i64::try_from(line.matches('{').count()).unwrap_or(0)
                - i64::try_from(closes).unwrap_or(0);
            if depth <= 0 && closes > 0 {
                end = i + 1;
                break;
            }
        }
        let mut sources: Vec<crate::FileRange> = Vec::new();
        for (origin, _) in origins {
            let data = DefData::new(db, &origin.def);
            let Some(range) = data.source_map.expr_range(origin.expr) else { continue };
            let source = crate::FileRange { path: origin.def.file.path(db).clone(), range };
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
        let line = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        links.push(KernelLink { kernel: name.to_owned(), lines: line(start)..line(end), sources });
    }
    links
}

pub(crate) fn show_kernel(db: &RootDatabase, position: &FilePosition) -> Option<KernelView> {
    let file = db.file(&position.path)?;
    if crate::apl::is_apl(&position.path) {
        return crate::apl::show_program(db, file);
    }
    if let Some((token, Definition::Def(loc))) = classify_at(db, file, position.offset) {
        return match loc.kind {
            DefKind::Entry if loc.file == file || token.text() == loc.name.as_str() => {
                whole_entry(db, &loc)
            }
            DefKind::Def => {
                let search = kernels_computing(db, &loc, &|_| true, EXPLICIT_BUDGET);
                let title = format!("every kernel computing part of `{}`", loc.name);
                kernels_text(db, &title, &search)
            }
            DefKind::Entry | DefKind::TypeAlias => None,
        };
    }
    let data = enclosing_def(db, file, position.offset)?;
    let Some((search, range)) = innermost_uses(db, &data, position.offset) else {
        // In an entry an error stops: say which, rather than nothing.
        return blocked_view(db, &data.loc);
    };
    let text = file.text(db);
    let whole = text.get(std::ops::Range::<usize>::from(range)).unwrap_or("?");
    let first_line = whole.lines().next().unwrap_or("");
    let short: String = first_line.chars().take(60).collect();
    let ellipsis = if short.len() < whole.len() { " …" } else { "" };
    let line = crate::line_index(db, file).to_chars(text, range.start()).line + 1;
    let title = format!("the kernels computing `{short}{ellipsis}` ({}:{line})", file.path(db));
    kernels_text(db, &title, &search)
}

/// The kernels computing the innermost expression of `data` that holds `offset` and
/// that some kernel computes, with that expression's range.
fn innermost_uses(
    db: &RootDatabase,
    data: &DefData,
    offset: TextSize,
) -> Option<(KernelSearch, TextRange)> {
    let KernelSearch { uses: all, too_large } =
        kernels_computing(db, &data.loc, &|_| true, EXPLICIT_BUDGET);
    let calls = combinator_calls(&data.body);
    // A combinator's path or inner call counts as its saturated call.
    let range_of = |use_: &KernelUse| {
        let expr = use_.origin.expr;
        let expr = calls
            .iter()
            .find(|c| c.covers(expr))
            .and_then(|c| c.calls.last().copied())
            .unwrap_or(expr);
        data.source_map.expr_range(expr)
    };
    let best = all
        .iter()
        .filter_map(range_of)
        .filter(|range| range.contains_inclusive(offset))
        .min_by_key(|range| range.len())?;
    let uses: Vec<KernelUse> = all.iter().filter(|u| range_of(u) == Some(best)).cloned().collect();
    Some((KernelSearch { uses, too_large }, best))
}

/// The view of an entry that an error in its definitions stops from compiling.
fn blocked_view(db: &RootDatabase, loc: &DefLoc) -> Option<KernelView> {
    let why = crate::program::blocked_entry(db, loc)?;
    Some(KernelView {
        name: format!("{}/{}.cl", file_stem(db, loc.file), loc.name),
        text: format!("// Weft: no kernels for entry `{}`: {why}\n", loc.name),
        links: Vec::new(),
        lines: Vec::new(),
    })
}

fn whole_entry(db: &RootDatabase, loc: &DefLoc) -> Option<KernelView> {
    let Some(compiled) = compile_entry(db, loc.file, loc.name.as_str()) else {
        return blocked_view(db, loc);
    };
    let name = format!("{}/{}.cl", file_stem(db, loc.file), loc.name);
    let mut view = ViewText::default();
    let mut links = Vec::new();
    match compiled {
        Ok(compiled) => {
            view.comment(&format!(
                "// Weft: the OpenCL program of entry `{}` ({}), {} kernel{}: the kernels first, \
             then the helpers they call (which the device compiles before them)\n\n",
                loc.name,
                loc.file.path(db),
                compiled.kernels.len(),
                if compiled.kernels.len() == 1 { "" } else { "s" },
            ));
            view.push(kernels_first(weft_opencl::print_program_with_origins(&compiled)));
            let kernels = compiled.kernels.iter().map(|k| (k.name.as_str(), &k.origins[..]));
            links = kernel_links(db, &view.text, kernels);
        }
        Err(message) => {
            view.comment(&format!(
                "// Weft: entry `{}` cannot be compiled:\n// {message}\n",
                loc.name
            ));
        }
    }
    let lines = view.line_links(db);
    Some(KernelView { name, text: view.text, links, lines })
}

/// An OpenCL program with its kernels first, then the rest (pragmas, run-time error
/// helpers, the defs the kernels call), each top-level declaration with the comments
/// above it: a reader looks for the kernels, and the program puts 40 lines of helpers
/// before them. The lines are the program's, only reordered, each keeping its origin.
fn kernels_first(program: weft_opencl::Printed) -> weft_opencl::Printed {
    type Lines = Vec<(String, Option<weft_core::Origin>)>;
    let mut kernels: Lines = Vec::new();
    let mut helpers: Lines = Vec::new();
    let mut item: Lines = Vec::new();
    let mut depth = 0i64;
    let all_origins = program.origins.clone();
    let mut origins = program.origins.into_iter();
    // Blank lines before a declaration are not kept (one is written after each).
    let take = |item: &mut Lines, out: &mut Lines| {
        let blank = item.iter().take_while(|(l, _)| l.is_empty()).count();
        out.extend(item.drain(..).skip(blank));
        out.push((String::new(), None));
    };
    for line in program.text.lines() {
        item.push((line.to_owned(), origins.next().flatten()));
        let opens = line.matches('{').count();
        let closes = line.matches('}').count();
        depth += i64::try_from(opens).unwrap_or(0) - i64::try_from(closes).unwrap_or(0);
        // A top-level declaration ends where its braces close.
        if depth <= 0 && closes > 0 {
            depth = 0;
            let is_kernel = item.iter().any(|(l, _)| l.starts_with("__kernel "));
            take(&mut item, if is_kernel { &mut kernels } else { &mut helpers });
        }
    }
    if kernels.is_empty() {
        // An entry computed on the host: the program as it is.
        return weft_opencl::Printed { text: program.text, origins: all_origins };
    }
    let blank = item.iter().take_while(|(l, _)| l.is_empty()).count();
    helpers.extend(item.into_iter().skip(blank));
    while helpers.last().is_some_and(|(l, _)| l.is_empty()) {
        helpers.pop();
    }
    let mut lines = kernels;
    lines.push(("// Helpers called by the kernels".to_owned(), None));
    lines.push((String::new(), None));
    lines.extend(helpers);
    let mut text = String::new();
    let mut out_origins = Vec::new();
    for (line, origin) in lines {
        text.push_str(&line);
        text.push('\n');
        out_origins.push(origin);
    }
    weft_opencl::Printed { text, origins: out_origins }
}

/// The text of every kernel in `uses` (each once), under a title.
fn kernels_text(db: &RootDatabase, title: &str, search: &KernelSearch) -> Option<KernelView> {
    let uses = &search.uses;
    let first = uses.first()?;
    let mut view = ViewText::default();
    view.comment(&format!("// Weft: {title}\n"));
    for (entry, size) in &search.too_large {
        view.comment(&format!(
            "// (entry `{entry}` is not shown: too large to compile in the editor, {size} core \
             expressions once its calls are inlined)\n"
        ));
    }
    let mut shown: FxHashSet<(SourceFile, &str, usize)> = FxHashSet::default();
    let mut compiled: Vec<(SourceFile, &str, Option<Compiled>)> = Vec::new();
    for use_ in uses {
        if !shown.insert((use_.file, use_.entry.as_str(), use_.kernel_idx)) {
            continue;
        }
        let idx = match compiled.iter().position(|(f, e, _)| *f == use_.file && *e == use_.entry) {
            Some(idx) => idx,
            None => {
                compiled.push((use_.file, &use_.entry, compile_entry(db, use_.file, &use_.entry)));
                compiled.len() - 1
            }
        };
        view.comment(&format!(
            "\n// kernel `{}` of entry `{}` ({}): {}\n",
            use_.kernel,
            use_.entry,
            use_.file.path(db),
            use_.role
        ));
        match &compiled[idx].2 {
            Some(Ok(entry)) => match entry.kernels.get(use_.kernel_idx) {
                Some(kernel) if kernel.name == use_.kernel => {
                    view.push(weft_opencl::print_kernel_with_origins(entry, use_.kernel_idx));
                }
                // The file changed between the two compilations (an edit cancels this
                // read, so this is only a back end that is not deterministic).
                _ => view.comment("// (this kernel is no longer generated)\n"),
            },
            Some(Err(message)) => view.comment(&format!("// cannot be compiled: {message}\n")),
            None => view.comment("// (this entry is no longer compiled)\n"),
        }
    }
    let name = format!("{}/{}/{}.cl", file_stem(db, first.file), first.entry, first.kernel);
    let kernels = compiled.iter().filter_map(|(_, _, c)| c.as_ref()?.as_ref().ok());
    let kernels = kernels.flat_map(|c| c.kernels.iter().map(|k| (k.name.as_str(), &k.origins[..])));
    let links = kernel_links(db, &view.text, kernels);
    let lines = view.line_links(db);
    Some(KernelView { name, text: view.text, links, lines })
}

/// The file name without folders and extension, for virtual document names.
fn file_stem(db: &RootDatabase, file: SourceFile) -> String {
    let path = file.path(db);
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.strip_suffix(".weft").unwrap_or(name);
    stem.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    /// The document's name, its comments and its kernels' heads: the kernels' code is
    /// weft-opencl's (its own snapshot tests pin it).
    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let actual = match fixture.analysis.show_kernel(&fixture.position).unwrap() {
            Some(view) => format!("{}\n{}\n", view.name, outline(&view.text)),
            None => "no kernel\n".to_owned(),
        };
        expect.assert_eq(&actual);
    }

    fn outline(text: &str) -> String {
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("//") || line.starts_with("__kernel"))
            .collect();
        lines.join("\n")
    }

    /// Each kernel's lines in the view (its first and last line) and the source text of
    /// the expressions it computes.
    fn check_links(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let view = fixture.analysis.show_kernel(&fixture.position).unwrap().unwrap();
        let lines: Vec<&str> = view.text.lines().collect();
        let mut actual = String::new();
        for link in &view.links {
            let first = lines[link.lines.start as usize];
            let last = lines[link.lines.end as usize - 1];
            actual.push_str(&format!("{}: `{first}` .. `{last}`\n", link.kernel));
            for source in &link.sources {
                let text = fixture.analysis.file_text(&source.path).unwrap().unwrap();
                let snippet = &text[std::ops::Range::<usize>::from(source.range)];
                actual.push_str(&format!("    {}: `{snippet}`\n", source.path));
            }
        }
        expect.assert_eq(&actual);
    }

    /// The linked lines of the view in runs of consecutive lines linked to one source
    /// expression: the run's lines, its first line's text, the source text.
    fn check_line_links(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let view = fixture.analysis.show_kernel(&fixture.position).unwrap().unwrap();
        let lines: Vec<&str> = view.text.lines().collect();
        let mut runs: Vec<(u32, u32, &crate::FileRange)> = Vec::new();
        for link in &view.lines {
            match runs.last_mut() {
                Some((_, last, source)) if *last + 1 == link.line && **source == link.source => {
                    *last = link.line;
                }
                _ => runs.push((link.line, link.line, &link.source)),
            }
        }
        let mut actual = String::new();
        for (first, last, source) in runs {
            let text = fixture.analysis.file_text(&source.path).unwrap().unwrap();
            let snippet = &text[std::ops::Range::<usize>::from(source.range)];
            let more = if snippet.contains('\n') { " …" } else { "" };
            let snippet = format!("{}{more}", snippet.lines().next().unwrap_or(""));
            let line: String = lines[first as usize].trim().chars().take(40).collect();
            let lines = format!("{first}-{last}");
            actual.push_str(&format!("{lines:<7} {line:<40} | {snippet}\n"));
        }
        expect.assert_eq(&actual);
    }

    /// Compiler Explorer links lines, not whole kernels: each line of generated code
    /// that computes part of the source is linked to the expression it computes.
    #[test]
    fn each_line_is_linked_to_the_expression_it_computes() {
        check_line_links(
            r#"
entry s$0cale (a: f32) (xs: [n]f32) : [n]f32 =
  map (\x ->
         let y = a * x
         in y + 1f32)
      xs
"#,
            expect![[r#"
                9-19    { // main.weft:2                         | map (\x -> …
                20-20   float y_10 = a_9 * x_5;                  | a * x
                21-22   float v_11 = y_10 + 1e0f;                | y + 1f32
                23-23   long i_13 = base_3 + 1;                  | map (\x -> …
                24-24   float y_14 = a_9 * x_6;                  | a * x
                25-26   float v_15 = y_14 + 1e0f;                | y + 1f32
                27-27   long i_16 = base_3 + 2;                  | map (\x -> …
                28-28   float y_17 = a_9 * x_7;                  | a * x
                29-30   float v_18 = y_17 + 1e0f;                | y + 1f32
                31-31   long i_19 = base_3 + 3;                  | map (\x -> …
                32-32   float y_20 = a_9 * x_8;                  | a * x
                33-34   float v_21 = y_20 + 1e0f;                | y + 1f32
                36-38   long tail_23 = runs_22 * 4 + item_2;     | map (\x -> …
                39-39   float y_25 = a_9 * x_24;                 | a * x
                40-41   float v_26 = y_25 + 1e0f;                | y + 1f32
            "#]],
        );
        check_line_links(
            r#"
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (ma$0p2 (\x y -> x * y) xs ys)
"#,
            expect![[r#"
                11-27   long t_3 = (long)get_local_id(0);        | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                28-28   float v_19 = x_10 * x_15;                | x * y
                29-30   long i_20 = base_8 + 1;                  | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                31-31   float v_22 = x_11 * x_16;                | x * y
                32-33   long i_23 = base_8 + 2;                  | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                34-34   float v_25 = x_12 * x_17;                | x * y
                35-36   long i_26 = base_8 + 3;                  | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                37-37   float v_28 = x_13 * x_18;                | x * y
                38-45   float v_29 = acc_5 + v_19;               | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                47-50   long tail_33 = quads_7 * 4 + (long)get_g | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                51-51   float v_36 = x_34 * y_35;                | x * y
                52-53   float v_37 = acc_5 + v_36;               | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                55-61   red_2[t_3] = acc_5;                      | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                63-68   barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                70-75   barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                77-82   barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                84-89   barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                91-96   barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                98-103  barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                105-110 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                112-114 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                126-144 long t_3 = (long)get_local_id(0);        | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                146-149 long tail_18 = quads_7 * 4 + (long)get_g | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                151-157 red_2[t_3] = acc_5;                      | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                159-164 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                166-171 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                173-178 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                180-185 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                187-192 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                194-199 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                201-206 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
                208-210 barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0f32 (map2 (\x y -> x * y) xs ys)
            "#]],
        );
    }

    /// On every entry of every example, the whole program's view links lines of every
    /// kernel that computes source expressions to source ranges, and only lines of
    /// the view.
    #[test]
    fn every_examples_kernels_have_linked_lines() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut host = crate::AnalysisHost::new();
        let mut change = crate::Change::default();
        let mut names = Vec::new();
        for dir in [root.clone(), root.join("lib")] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "weft") {
                    let name = format!("examples/{}", path.strip_prefix(&root).unwrap().display());
                    change.set_file(name.clone(), std::fs::read_to_string(&path).unwrap());
                    names.push(name);
                }
            }
        }
        host.apply_change(change);
        let analysis = host.analysis();
        let mut kernels = 0;
        for name in &names {
            let text = analysis.file_text(name).unwrap().unwrap();
            for (at, _) in text.match_indices("\nentry ") {
                let offset = u32::try_from(at + "\nentry ".len()).unwrap();
                let position = crate::FilePosition { path: name.clone(), offset: offset.into() };
                let Some(view) = analysis.show_kernel(&position).unwrap() else { continue };
                let n_lines = u32::try_from(view.text.lines().count()).unwrap();
                assert!(view.lines.windows(2).all(|w| w[0].line < w[1].line), "{name}");
                for link in &view.lines {
                    assert!(link.line < n_lines, "{name}: line {} of {n_lines}", link.line);
                    let source = analysis.file_text(&link.source.path).unwrap().unwrap();
                    assert!(
                        usize::from(link.source.range.end()) <= source.len()
                            && !link.source.range.is_empty(),
                        "{name}: {:?}",
                        link.source
                    );
                }
                // A kernel no source expression is known for (a copy the host asks
                // for, to lay out a result) has nothing to link.
                for kernel in view.links.iter().filter(|k| !k.sources.is_empty()) {
                    kernels += 1;
                    let linked = view.lines.iter().any(|l| kernel.lines.contains(&l.line));
                    let shown = || {
                        let range = kernel.lines.start as usize..kernel.lines.end as usize;
                        view.text.lines().skip(range.start).take(range.len()).collect::<Vec<_>>()
                    };
                    assert!(
                        linked,
                        "{name}: no line of `{}` is linked: {:#?}",
                        kernel.kernel,
                        shown()
                    );
                }
            }
        }
        assert!(kernels > 100, "only {kernels} kernels");
    }

    #[test]
    fn kernels_are_linked_to_the_source_they_compute() {
        check_links(
            r#"
entry d$0ot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (map2 (*) xs ys)
"#,
            expect![[r#"
                dot_reduce_partials_0: `// reduce partials: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1` .. `}`
                    main.weft: `reduce (+) 0f32 (map2 (*) xs ys)`
                    main.weft: `map2 (*) xs ys`
                dot_reduce_total_1: `// reduce total: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1` .. `}`
                    main.weft: `reduce (+) 0f32 (map2 (*) xs ys)`
                    main.weft: `map2 (*) xs ys`
            "#]],
        );
        check_links(
            r#"
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (ma$0p2 (*) xs ys)
"#,
            expect![[r#"
                dot_reduce_partials_0: `// kernel `dot_reduce_partials_0` of entry `dot` (main.weft): @grid: multi-stage reduction (work-group trees in local memory, then one group)` .. `}`
                    main.weft: `reduce (+) 0f32 (map2 (*) xs ys)`
                    main.weft: `map2 (*) xs ys`
                dot_reduce_total_1: `// kernel `dot_reduce_total_1` of entry `dot` (main.weft): @grid: multi-stage reduction (second stage)` .. `}`
                    main.weft: `reduce (+) 0f32 (map2 (*) xs ys)`
                    main.weft: `map2 (*) xs ys`
            "#]],
        );
    }

    #[test]
    fn map_shows_its_grid_kernel() {
        check(
            r#"
entry f (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * 2f32) xs
"#,
            expect![[r#"
                main/f/f_map_0.cl
                // Weft: the kernels computing `map (\x -> x * 2f32) xs` (main.weft:1)
                // kernel `f_map_0` of entry `f` (main.weft): @grid: one work-item per run of 4 elements
                // segmap@grid: one work-item per run of 4 points, main.weft:1
                __kernel void f_map_0(
            "#]],
        );
    }

    #[test]
    fn entry_name_shows_the_whole_program() {
        check(
            r#"
entry s$0um (xs: [n]f32) : f32 = reduce (+) 0f32 xs
"#,
            expect![[r#"
                main/sum.cl
                // Weft: the OpenCL program of entry `sum` (main.weft), 2 kernels: the kernels first, then the helpers they call (which the device compiles before them)
                // reduce partials: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
                __kernel void sum_reduce_partials_0(
                // reduce total: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
                __kernel void sum_reduce_total_1(
                // Helpers called by the kernels
                // Generated by the Weft compiler for OpenCL C 1.2.
                // Records run-time error `code` with its payload; the first failing work-item wins.
            "#]],
        );
    }

    /// The whole program's view puts the kernels before the helpers, and keeps every
    /// line of the program.
    #[test]
    fn kernels_come_before_the_helpers_in_every_examples_program() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut checked = 0;
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "weft") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut db = weft_hir::RootDatabase::default();
            let file = db.set_file("main.weft", &text);
            for loc in weft_hir::item_tree(&db, file).defs.iter() {
                if loc.kind != weft_hir::DefKind::Entry {
                    continue;
                }
                let compiled = crate::kernels::compile_entry(&db, file, loc.name.as_str());
                let Some(Ok(compiled)) = compiled else {
                    continue;
                };
                let source = &compiled.plan.source;
                let printed = weft_opencl::print_program_with_origins(&compiled);
                let shown = super::kernels_first(printed);
                assert_eq!(shown.origins.len(), shown.text.lines().count());
                let shown = shown.text;
                let mut before: Vec<&str> = source.lines().filter(|l| !l.is_empty()).collect();
                let mut after: Vec<&str> = shown
                    .lines()
                    .filter(|l| !l.is_empty() && *l != "// Helpers called by the kernels")
                    .collect();
                before.sort_unstable();
                after.sort_unstable();
                assert_eq!(before, after, "{}: `{}`", path.display(), loc.name);
                // A program without kernels (an entry computed on the host) is shown as is.
                if !source.lines().any(|l| l.starts_with("__kernel ")) {
                    continue;
                }
                let first_code = shown.lines().find(|l| !l.is_empty() && !l.starts_with("//"));
                assert!(
                    first_code.is_some_and(|l| l.starts_with("__kernel ")),
                    "{}: `{}` starts with {first_code:?}",
                    path.display(),
                    loc.name
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} entries compiled");
    }

    #[test]
    fn fused_producer_shows_its_consumer() {
        check(
            r#"
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (ma$0p2 (*) xs ys)
"#,
            expect![[r#"
                main/dot/dot_reduce_partials_0.cl
                // Weft: the kernels computing `map2 (*) xs ys` (main.weft:1)
                // kernel `dot_reduce_partials_0` of entry `dot` (main.weft): @grid: multi-stage reduction (work-group trees in local memory, then one group)
                // reduce partials: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
                __kernel void dot_reduce_partials_0(
                // kernel `dot_reduce_total_1` of entry `dot` (main.weft): @grid: multi-stage reduction (second stage)
                // reduce total: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
                __kernel void dot_reduce_total_1(
            "#]],
        );
    }

    #[test]
    fn def_used_by_an_entry_of_another_file() {
        check(
            r#"
--- /lib.weft
def double (xs: [n]f32) : [n]f32 = ma$0p (\x -> x + x) xs
--- /main.weft
import "lib"
entry e (xs: [n]f32) : [n]f32 = double xs
"#,
            expect![[r#"
                main/e/e_map_0.cl
                // Weft: the kernels computing `map (\x -> x + x) xs` (lib.weft:1)
                // kernel `e_map_0` of entry `e` (main.weft): @grid: one work-item per run of 4 elements
                // segmap@grid: one work-item per run of 4 points, lib.weft:1
                __kernel void e_map_0(
            "#]],
        );
    }

    #[test]
    fn def_name_shows_every_kernel_computing_it() {
        check(
            r#"
def s$0q (xs: [n]f32) : [n]f32 = map (\x -> x * x) xs
entry a (xs: [n]f32) : [n]f32 = sq xs
entry b (xs: [n]f32) : f32 = reduce (+) 0f32 (sq xs)
"#,
            expect![[r#"
                main/a/a_map_0.cl
                // Weft: every kernel computing part of `sq`
                // kernel `a_map_0` of entry `a` (main.weft): @grid: one work-item per run of 4 elements
                // segmap@grid: one work-item per run of 4 points, main.weft:1
                __kernel void a_map_0(
                // kernel `b_reduce_partials_0` of entry `b` (main.weft): @grid: multi-stage reduction (work-group trees in local memory, then one group)
                // reduce partials: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:3
                __kernel void b_reduce_partials_0(
                // kernel `b_reduce_total_1` of entry `b` (main.weft): @grid: multi-stage reduction (second stage)
                // reduce total: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:3
                __kernel void b_reduce_total_1(
            "#]],
        );
    }

    #[test]
    fn an_error_in_another_def_keeps_the_kernel_view() {
        check(
            r#"
entry f (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * 2f32) xs
def broken (x: i32) : i32 = x + true
"#,
            expect![[r#"
                main/f/f_map_0.cl
                // Weft: the kernels computing `map (\x -> x * 2f32) xs` (main.weft:1)
                // kernel `f_map_0` of entry `f` (main.weft): @grid: one work-item per run of 4 elements
                // segmap@grid: one work-item per run of 4 points, main.weft:1
                __kernel void f_map_0(
            "#]],
        );
    }
}
