//! The `unresolved-name` diagnostic, with its "did you mean" hint (version 1.1): the
//! Weft spelling of what a Futhark or NumPy programmer reaches for, else the closest
//! name in scope by edit distance.

use weft_hir::{Db, MathFn, Name, ScalarTy, SourceFile, UNQUALIFIED_BUILTINS, file_scope};

// Diagnostic: unresolved-name
//
// Shown on a name that is not in scope, with a hint where one exists: the Weft
// spelling of another language's name (`hist`, `f32.from_i64`), or a name in scope
// with a similar spelling.
pub(super) fn words(db: &dyn Db, file: SourceFile, name: &Name) -> super::Words {
    super::Words {
        help: did_you_mean(db, file, name.as_str()),
        ..super::Words::message(format!("cannot find `{name}` in this scope"))
    }
}

/// Futhark and NumPy names and their Weft spellings, for names Weft spells otherwise.
const FOREIGN: &[(&str, &str)] = &[
    ("hist", "`reduce_by_index dest op ne is vs` (Futhark's `hist`)"),
    ("reduce_comm", "`reduce` (any associative operator)"),
    ("scan_exclusive", "`scan`, then shift right by one with `concat [ne] (init xs)`"),
    (
        "filter",
        "no `filter` yet (its size is known only at run time): `scan` the flags and `scatter` (examples/compact.weft)",
    ),
    (
        "partition",
        "no `partition` yet (its sizes are known only at run time): `scan` the flags and `scatter` (examples/compact.weft)",
    ),
    ("sum", "`f32.sum`, `i32.sum`, ... (one per type), or `reduce (+) 0`"),
    ("product", "`f32.product`, `i32.product`, ... (one per type)"),
    ("maximum", "`f32.maximum`, `i32.maximum`, ... (one per type)"),
    ("minimum", "`f32.minimum`, `i32.minimum`, ... (one per type)"),
    ("max", "`f32.max`, `i32.max`, ... (one per type); of an array, `f32.maximum`"),
    ("min", "`f32.min`, `i32.min`, ... (one per type); of an array, `f32.minimum`"),
    ("argmax", "`f32.argmax`, `i32.argmax`, ... (one per type)"),
    ("argmin", "`f32.argmin`, `i32.argmin`, ... (one per type)"),
    ("mean", "`f32.mean` or `f64.mean`"),
    ("arange", "`iota n`"),
    ("zeros", "`replicate n 0`"),
    ("ones", "`replicate n 1`"),
    ("full", "`replicate n x`"),
    ("linspace", "`tabulate n (\\i -> a + f32 i * step)`"),
    ("cumsum", "`scan (+) 0`"),
    ("cumprod", "`scan (*) 1`"),
    ("concatenate", "`concat` or `++`"),
    ("append", "`concat` or `++`"),
    ("hstack", "`concat` or `++`"),
    ("flip", "`reverse`"),
    ("roll", "`rotate` (note the sign: `rotate r` moves element `r` to the front)"),
    ("where", "`map3 (\\c x y -> if c then x else y) cs xs ys`"),
    ("select", "`map3 (\\c x y -> if c then x else y) cs xs ys`"),
    ("dot", "`reduce (+) 0 (map2 (*) xs ys)`"),
    ("len", "`length`"),
    ("size", "`length`"),
    ("shape", "`length` (of each dimension: `length xs`, `length xs[0]`)"),
    ("reshape", "`unflatten n m xs`"),
    ("ravel", "`flatten`"),
    ("fold", "`reduce` (associative) or `foldl` (in order)"),
    ("clip", "`f32.max lo (f32.min hi x)`"),
    ("clamp", "`f32.max lo (f32.min hi x)`"),
    ("logical_and", "`&&`"),
    ("logical_or", "`||`"),
    ("logical_not", "`!`"),
    ("float", "`f32 x` (a conversion is the type's name)"),
    ("int", "`i32 x` (a conversion is the type's name)"),
    ("sqrt", "`f32.sqrt` or `f64.sqrt`"),
    ("exp", "`f32.exp` or `f64.exp`"),
    ("log", "`f32.log` or `f64.log`"),
    ("sin", "`f32.sin` or `f64.sin`"),
    ("cos", "`f32.cos` or `f64.cos`"),
    ("tan", "`f32.tan` or `f64.tan`"),
    ("tanh", "`f32.tanh` or `f64.tanh`"),
    ("abs", "`f32.abs`, `i32.abs`, ... (one per type)"),
    ("floor", "`f32.floor` or `f64.floor`"),
    ("ceil", "`f32.ceil` or `f64.ceil`"),
    ("round", "`f32.round` or `f64.round`"),
    ("isnan", "`f32.isnan` or `f64.isnan`"),
    ("isinf", "`f32.isinf` or `f64.isinf`"),
    ("pow", "`f32.pow`, or the operator `**`"),
    ("power", "`f32.pow`, or the operator `**`"),
    ("mod", "the operator `%`"),
];

/// Qualified names Futhark has in every numeric type's namespace.
const FOREIGN_QUALIFIED: &[(&str, &str)] = &[
    ("atan", "no `atan` yet: `f32.atan2 x 1` is the arctangent of `x`"),
    ("asin", "no `asin` yet"),
    ("acos", "no `acos` yet"),
];

/// A hint for an unresolved name as written (`map6`, `f32.atan2`, `np_sum`), if any.
fn did_you_mean(db: &dyn Db, file: SourceFile, name: &str) -> Option<String> {
    if let Some((namespace, member)) = name.split_once('.') {
        return qualified(db, file, namespace, member);
    }
    if let Some((_, hint)) = FOREIGN.iter().find(|(foreign, _)| *foreign == name) {
        // A hint that starts with "no" says what is missing instead.
        return Some(if hint.starts_with("no ") {
            (*hint).to_owned()
        } else {
            format!("Weft spells this {hint}")
        });
    }
    let scope = file_scope(db, file);
    let candidates = scope
        .values
        .keys()
        .filter(|k| !k.contains('.'))
        .map(String::as_str)
        .chain(UNQUALIFIED_BUILTINS.iter().map(|(n, _)| *n))
        .chain(ScalarTy::ALL.iter().map(|s| s.name()));
    closest(name, candidates)
        .map(|found| format!("a name with a similar spelling exists: `{found}`"))
}

fn qualified(db: &dyn Db, file: SourceFile, namespace: &str, member: &str) -> Option<String> {
    let scalar = ScalarTy::from_name(namespace)?;
    // Futhark's `f32.from_i64 x` and `f32.to_i64 x`.
    if let Some(from) = member.strip_prefix("from_").and_then(ScalarTy::from_name) {
        return Some(format!(
            "Weft spells this `{namespace}.{}` (or `{namespace} x`)",
            from.name()
        ));
    }
    if let Some(to) = member.strip_prefix("to_").and_then(ScalarTy::from_name) {
        return Some(format!(
            "Weft spells this `{}.{namespace}` (or `{} x`)",
            to.name(),
            to.name()
        ));
    }
    if let Some((_, hint)) = FOREIGN_QUALIFIED.iter().find(|(foreign, _)| *foreign == member) {
        return Some(hint.to_string());
    }
    let prefix = format!("{namespace}.");
    let scope = file_scope(db, file);
    let members: Vec<String> = scope
        .values
        .keys()
        .filter_map(|k| k.strip_prefix(&prefix).map(str::to_owned))
        .chain(MathFn::namespace(scalar).iter().map(|(name, _)| (*name).to_owned()))
        .collect();
    closest(member, members.iter().map(String::as_str))
        .map(|found| format!("a name with a similar spelling exists: `{namespace}.{found}`"))
}

/// The candidate nearest to `name` by edit distance, when near enough to be a typo:
/// one edit for names of up to 4 characters, two for longer ones.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let budget = if name.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= budget)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("tabluate", "tabulate"), 2);
        assert_eq!(edit_distance("map", "map"), 0);
        assert_eq!(edit_distance("rotat", "rotate"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
