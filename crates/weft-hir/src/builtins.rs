//! The built-ins of LANGUAGE.md section 5, with their type schemes and one-line
//! descriptions (the editor shows both on hover).

use crate::Name;
pub use weft_values::MathFn;

use crate::ty::{ScalarTy, Scheme, SchemeParam, SizeVar, Ty, TySize};

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    /// `map` (1 array) to `map5` (5 arrays).
    Map(u8),
    Reduce,
    Scan,
    Generate,
    Iota,
    Replicate,
    Zip,
    Zip3,
    Unzip,
    Unzip3,
    Scatter,
    /// `reduce_by_index` (version 1.1): a histogram with an associative, commutative operator.
    ReduceByIndex,
    Transpose,
    Reverse,
    Flatten,
    Unflatten,
    Split,
    Take,
    Drop,
    Concat,
    Length,
    ToGlobal,
    ToLocal,
    ToPrivate,
    Force,
    /// `f32 x`: conversion to a scalar type.
    Convert(ScalarTy),
    /// `f32.sqrt`, `i32.max`, ...
    Math(ScalarTy, MathFn),
}

/// The names of unqualified built-ins, in the order completion lists them.
pub const UNQUALIFIED: &[(&str, Builtin)] = &[
    ("map", Builtin::Map(1)),
    ("map2", Builtin::Map(2)),
    ("map3", Builtin::Map(3)),
    ("map4", Builtin::Map(4)),
    ("map5", Builtin::Map(5)),
    ("reduce", Builtin::Reduce),
    ("scan", Builtin::Scan),
    ("generate", Builtin::Generate),
    ("iota", Builtin::Iota),
    ("replicate", Builtin::Replicate),
    ("zip", Builtin::Zip),
    ("zip3", Builtin::Zip3),
    ("unzip", Builtin::Unzip),
    ("unzip3", Builtin::Unzip3),
    ("scatter", Builtin::Scatter),
    ("reduce_by_index", Builtin::ReduceByIndex),
    ("transpose", Builtin::Transpose),
    ("reverse", Builtin::Reverse),
    ("flatten", Builtin::Flatten),
    ("unflatten", Builtin::Unflatten),
    ("split", Builtin::Split),
    ("take", Builtin::Take),
    ("drop", Builtin::Drop),
    ("concat", Builtin::Concat),
    ("length", Builtin::Length),
    ("to_global", Builtin::ToGlobal),
    ("to_local", Builtin::ToLocal),
    ("to_private", Builtin::ToPrivate),
    ("force", Builtin::Force),
];

impl Builtin {
    /// An unqualified name: a SOAC, a view, a memory annotation, or a conversion.
    pub fn lookup(name: &str) -> Option<Builtin> {
        if let Some(scalar) = ScalarTy::from_name(name) {
            return Some(Builtin::Convert(scalar));
        }
        UNQUALIFIED.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }

    /// `f32.sqrt`: a name in a scalar type's namespace.
    pub fn lookup_qualified(namespace: &str, name: &str) -> Option<Builtin> {
        let scalar = ScalarTy::from_name(namespace)?;
        MathFn::namespace(scalar)
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| Builtin::Math(scalar, *f))
    }

    /// Every built-in in a scalar type's namespace (`f32.sqrt`, `i32.max`, ...).
    pub fn in_namespace(scalar: ScalarTy) -> Vec<Builtin> {
        MathFn::namespace(scalar).iter().map(|(_, f)| Builtin::Math(scalar, *f)).collect()
    }

    pub fn name(self) -> String {
        match self {
            Builtin::Convert(scalar) => scalar.name().to_owned(),
            Builtin::Math(scalar, f) => format!("{}.{}", scalar.name(), f.name()),
            _ => UNQUALIFIED.iter().find(|(_, b)| *b == self).map_or("?", |(n, _)| n).to_owned(),
        }
    }

    /// Whether a strategy level may be glued to it (`map@group`), LANGUAGE.md §6.
    pub fn takes_level(self) -> bool {
        matches!(self, Builtin::Map(_) | Builtin::Generate | Builtin::Reduce | Builtin::Scan)
    }

    /// Which argument is the function whose body an annotation governs.
    pub fn function_arg(self) -> Option<usize> {
        match self {
            Builtin::Map(_) | Builtin::Reduce | Builtin::Scan => Some(0),
            Builtin::Generate => Some(1),
            _ => None,
        }
    }

    /// One line for hover and completion.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::Map(1) => "applies a function to every element",
            Builtin::Map(_) => {
                "applies a function to the elements of several arrays of one size, pairwise"
            }
            Builtin::Reduce => {
                "combines all elements with an associative operator and its neutral element"
            }
            Builtin::Scan => "inclusive prefix combination with an associative operator",
            Builtin::Generate => "an array from an index function (a pull array)",
            Builtin::Iota => "the array [0, 1, ..., n-1]",
            Builtin::Replicate => "n copies of a value",
            Builtin::Zip | Builtin::Zip3 => "pairs elements of arrays of one size (costs nothing)",
            Builtin::Unzip | Builtin::Unzip3 => {
                "splits an array of tuples into arrays (costs nothing)"
            }
            Builtin::Scatter => {
                "writes values at indices into a copy of an array; out-of-range indices are ignored"
            }
            Builtin::ReduceByIndex => {
                "combines each value into the bin its index names, with an associative and \
                 commutative operator; out-of-range indices are ignored"
            }
            Builtin::Transpose => "swaps the two outer dimensions (a view, no copy)",
            Builtin::Reverse => "reverses the outer dimension (a view, no copy)",
            Builtin::Flatten => "merges the two outer dimensions (a view where the layout allows)",
            Builtin::Unflatten => "splits the outer dimension into n rows of m (a view)",
            Builtin::Split => "chunks of k elements; the size must be divisible by k (a view)",
            Builtin::Take => "the first k elements (a view)",
            Builtin::Drop => "all but the first k elements (a view)",
            Builtin::Concat => "joins two arrays (copies)",
            Builtin::Length => "the size of the outer dimension",
            Builtin::ToGlobal => "materialises an array in global memory",
            Builtin::ToLocal => "materialises an array in local memory, shared by a work-group",
            Builtin::ToPrivate => "materialises an array in private memory of one work-item",
            Builtin::Force => "materialises an array in the address space the compiler infers",
            Builtin::Convert(_) => {
                "converts a scalar (integers wrap, float to integer saturates, NaN gives 0)"
            }
            Builtin::Math(_, f) => match f {
                MathFn::Sqrt => "square root",
                MathFn::Exp => "e raised to the argument",
                MathFn::Log => "natural logarithm",
                MathFn::Sin => "sine",
                MathFn::Cos => "cosine",
                MathFn::Tan => "tangent",
                MathFn::Tanh => "hyperbolic tangent",
                MathFn::Abs => "absolute value",
                MathFn::Min => "the smaller argument",
                MathFn::Max => "the larger argument",
                MathFn::Floor => "rounds down",
                MathFn::Ceil => "rounds up",
                MathFn::Pow => "the first argument raised to the second",
                MathFn::Atan2 => "`atan2 y x`: the angle of the point (x, y), in [-pi, pi]",
                MathFn::IsNan => "whether the argument is NaN",
                MathFn::Nan => "not a number",
                MathFn::Inf => "positive infinity",
                MathFn::Pi => "the ratio of a circle's circumference to its diameter",
                MathFn::Highest => "the largest value of the type",
                MathFn::Lowest => "the smallest value of the type",
            },
        }
    }

    /// The type scheme. Type parameters are named `a`..`e`; sizes `n`, `m`, `k`.
    pub fn scheme(self) -> Scheme {
        let a = || Ty::Param(Name::new("a"));
        let b = || Ty::Param(Name::new("b"));
        let c = || Ty::Param(Name::new("c"));
        let size = |name: &str| TySize::var(SizeVar::Param(Name::new(name)));
        let arr = |s: &str, elem: Ty| Ty::array(size(s), elem);
        let p = |ty: Ty| SchemeParam { binds_size: None, ty };
        let dep = |name: &str| SchemeParam { binds_size: Some(Name::new(name)), ty: Ty::i64() };
        let names = |ns: &[&str]| ns.iter().map(|n| Name::new(n)).collect::<Vec<_>>();
        let (type_params, size_params, params, ret): (&[&str], &[&str], Vec<SchemeParam>, Ty) =
            match self {
                Builtin::Map(arity) => {
                    let tys = ["a", "b", "c", "d", "e"];
                    let n_in = usize::from(arity).clamp(1, 5);
                    let ins: Vec<Ty> =
                        tys[..n_in].iter().map(|t| Ty::Param(Name::new(t))).collect();
                    let out = Ty::Param(Name::new("r"));
                    let f = ins.iter().rev().fold(out.clone(), |ret, t| Ty::func(t.clone(), ret));
                    let mut params = vec![p(f)];
                    params.extend(ins.into_iter().map(|t| p(arr("n", t))));
                    let mut type_params: Vec<Name> =
                        tys[..n_in].iter().map(|t| Name::new(t)).collect();
                    type_params.push(Name::new("r"));
                    return Scheme {
                        type_params,
                        size_params: names(&["n"]),
                        params,
                        ret: arr("n", out),
                    };
                }
                Builtin::Reduce => (
                    &["a"],
                    &["n"],
                    vec![p(Ty::func(a(), Ty::func(a(), a()))), p(a()), p(arr("n", a()))],
                    a(),
                ),
                Builtin::Scan => (
                    &["a"],
                    &["n"],
                    vec![p(Ty::func(a(), Ty::func(a(), a()))), p(a()), p(arr("n", a()))],
                    arr("n", a()),
                ),
                Builtin::Generate => {
                    (&["a"], &[], vec![dep("n"), p(Ty::func(Ty::i64(), a()))], arr("n", a()))
                }
                Builtin::Iota => (&[], &[], vec![dep("n")], arr("n", Ty::i64())),
                Builtin::Replicate => (&["a"], &[], vec![dep("n"), p(a())], arr("n", a())),
                Builtin::Zip => (
                    &["a", "b"],
                    &["n"],
                    vec![p(arr("n", a())), p(arr("n", b()))],
                    arr("n", Ty::tuple(vec![a(), b()])),
                ),
                Builtin::Zip3 => (
                    &["a", "b", "c"],
                    &["n"],
                    vec![p(arr("n", a())), p(arr("n", b())), p(arr("n", c()))],
                    arr("n", Ty::tuple(vec![a(), b(), c()])),
                ),
                Builtin::Unzip => (
                    &["a", "b"],
                    &["n"],
                    vec![p(arr("n", Ty::tuple(vec![a(), b()])))],
                    Ty::tuple(vec![arr("n", a()), arr("n", b())]),
                ),
                Builtin::Unzip3 => (
                    &["a", "b", "c"],
                    &["n"],
                    vec![p(arr("n", Ty::tuple(vec![a(), b(), c()])))],
                    Ty::tuple(vec![arr("n", a()), arr("n", b()), arr("n", c())]),
                ),
                Builtin::Scatter => (
                    &["a"],
                    &["n", "k"],
                    vec![p(arr("n", a())), p(arr("k", Ty::i64())), p(arr("k", a()))],
                    arr("n", a()),
                ),
                Builtin::ReduceByIndex => (
                    &["a"],
                    &["m", "n"],
                    vec![
                        p(arr("m", a())),
                        p(Ty::func(a(), Ty::func(a(), a()))),
                        p(a()),
                        p(arr("n", Ty::i64())),
                        p(arr("n", a())),
                    ],
                    arr("m", a()),
                ),
                Builtin::Transpose => {
                    (&["a"], &["n", "m"], vec![p(arr("n", arr("m", a())))], arr("m", arr("n", a())))
                }
                Builtin::Reverse => (&["a"], &["n"], vec![p(arr("n", a()))], arr("n", a())),
                Builtin::Flatten => {
                    let flat = Ty::array(size("n").mul(&size("m")), a());
                    (&["a"], &["n", "m"], vec![p(arr("n", arr("m", a())))], flat)
                }
                Builtin::Unflatten => {
                    let flat = Ty::array(size("n").mul(&size("m")), a());
                    (&["a"], &[], vec![dep("n"), dep("m"), p(flat)], arr("n", arr("m", a())))
                }
                Builtin::Split => {
                    let chunks = Ty::array(size("n").div_exact(&size("k")), arr("k", a()));
                    (&["a"], &["n"], vec![dep("k"), p(arr("n", a()))], chunks)
                }
                Builtin::Take => (&["a"], &["n"], vec![dep("k"), p(arr("n", a()))], arr("k", a())),
                Builtin::Drop => {
                    let rest = Ty::array(size("n").sub(&size("k")), a());
                    (&["a"], &["n"], vec![dep("k"), p(arr("n", a()))], rest)
                }
                Builtin::Concat => {
                    let joined = Ty::array(size("n").add(&size("m")), a());
                    (&["a"], &["n", "m"], vec![p(arr("n", a())), p(arr("m", a()))], joined)
                }
                Builtin::Length => (&["a"], &["n"], vec![p(arr("n", a()))], Ty::i64()),
                Builtin::ToGlobal | Builtin::ToLocal | Builtin::ToPrivate | Builtin::Force => {
                    (&["a"], &[], vec![p(a())], a())
                }
                // Conversions and math functions are overloaded on their argument's scalar
                // type; inference handles them directly. Their scheme shows one instance.
                Builtin::Convert(to) => (&["a"], &[], vec![p(a())], Ty::Scalar(to)),
                Builtin::Math(scalar, f) => {
                    let t = Ty::Scalar(scalar);
                    let ret = if f == MathFn::IsNan { Ty::bool() } else { t.clone() };
                    let params = (0..f.arity()).map(|_| p(t.clone())).collect();
                    (&[], &[], params, ret)
                }
            };
        Scheme { type_params: names(type_params), size_params: names(size_params), params, ret }
    }
}
