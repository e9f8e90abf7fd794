//! Type annotations in APL comments (thesis §3.3): a line `⍝: τ → τ'` (monadic) or
//! `⍝: τ → τ' → τ''` (dyadic: `⍺`, `⍵`, result) inside a dfn. Dyalog ignores them;
//! here they are checked at every application, after inference, by matching the
//! inferred argument and result types against the annotation: base-type variables
//! (`κ`) and shape variables (`ρ`) are bound by the first match, and a shape term
//! with one unknown variable is solved (over the naturals), so `<κ>(ρ+1) → <κ>ρ`
//! rejects an empty vector.
//!
//! Types: `<κ>ρ` (vector of length ρ), `[κ]ρ` (rank ρ), `S(κ,ρ)`, `SV(κ,ρ)`, and `κ`
//! alone (a scalar). κ is `int`, `double`, `bool` or a name; ρ is a sum of naturals and
//! names, in parentheses when it is not a single one.

use std::collections::BTreeMap;

use crate::ty::{Base, Ty};

/// A base type in an annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ABase {
    Known(Base),
    Var(String),
}

/// A linear shape term over named variables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ATerm {
    pub constant: i64,
    pub vars: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AForm {
    Arr,
    Vec,
    S,
    SV,
}

/// A type in an annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AType {
    pub form: AForm,
    pub base: ABase,
    pub shape: ATerm,
}

/// A dfn's annotation: its parameters (`⍺` first when dyadic) and result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<AType>,
    pub result: AType,
    /// The annotation as written, for messages.
    pub text: String,
}

/// Parses the text after `⍝:`.
pub fn parse_signature(text: &str) -> Result<Signature, String> {
    let parts: Vec<&str> = text.split('→').map(str::trim).collect();
    if parts.len() < 2 || parts.len() > 3 {
        return Err("an annotation is `⍝: τ → τ'` or `⍝: τ → τ' → τ''`".to_owned());
    }
    let mut types = Vec::new();
    for p in &parts {
        types.push(parse_type(p)?);
    }
    let result = types.pop().ok_or("an annotation needs a result type")?;
    Ok(Signature { params: types, result, text: parts.join(" → ") })
}

fn parse_base(s: &str) -> Result<ABase, String> {
    let s = s.trim();
    Ok(match s {
        "int" => ABase::Known(Base::Int),
        "double" => ABase::Known(Base::Double),
        "bool" => ABase::Known(Base::Bool),
        _ if !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') => {
            ABase::Var(s.to_owned())
        }
        _ => return Err(format!("`{s}` is not a base type (int, double, bool or a name)")),
    })
}

fn parse_term(s: &str) -> Result<ATerm, String> {
    let s = s.trim();
    let s = s.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(s);
    let mut term = ATerm::default();
    for part in s.split('+').map(str::trim) {
        if let Ok(n) = part.parse::<i64>() {
            term.constant += n;
        } else if !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_') {
            *term.vars.entry(part.to_owned()).or_insert(0) += 1;
        } else {
            return Err(format!("`{part}` is not a shape (a natural number or a name)"));
        }
    }
    Ok(term)
}

fn parse_type(s: &str) -> Result<AType, String> {
    let s = s.trim();
    let bracketed = |open: char, close: char| -> Option<(String, String)> {
        let rest = s.strip_prefix(open)?;
        let end = rest.find(close)?;
        Some((rest[..end].to_owned(), rest[end + close.len_utf8()..].to_owned()))
    };
    if let Some((base, shape)) = bracketed('<', '>') {
        return Ok(AType {
            form: AForm::Vec,
            base: parse_base(&base)?,
            shape: parse_term(&shape)?,
        });
    }
    if let Some((base, shape)) = bracketed('[', ']') {
        return Ok(AType {
            form: AForm::Arr,
            base: parse_base(&base)?,
            shape: parse_term(&shape)?,
        });
    }
    for (prefix, form) in [("SV(", AForm::SV), ("S(", AForm::S)] {
        if let Some(inner) = s.strip_prefix(prefix).and_then(|t| t.strip_suffix(')')) {
            let (base, shape) = inner.split_once(',').ok_or("`S(κ,ρ)` needs a comma")?;
            return Ok(AType { form, base: parse_base(base)?, shape: parse_term(shape)? });
        }
    }
    Ok(AType { form: AForm::Arr, base: parse_base(s)?, shape: ATerm::default() })
}

/// Variables bound while matching one application.
#[derive(Debug, Default)]
pub struct Bindings {
    bases: BTreeMap<String, Base>,
    shapes: BTreeMap<String, i64>,
}

impl ATerm {
    /// Matches the term against a known natural `n`, binding its one unknown
    /// variable; `false` when it cannot hold.
    fn unify(&self, n: i64, b: &mut Bindings) -> bool {
        let mut rest = n - self.constant;
        let mut unknown = Vec::new();
        for (v, &c) in &self.vars {
            match b.shapes.get(v) {
                Some(&k) => rest -= c * k,
                None => unknown.push((v.clone(), c)),
            }
        }
        match unknown.as_slice() {
            [] => rest == 0,
            [(v, c)] => {
                if rest % c != 0 || rest / c < 0 {
                    return false;
                }
                b.shapes.insert(v.clone(), rest / c);
                true
            }
            // Under-determined (`γ1+γ2 = 3`): accepted, as apltail defers it.
            _ => rest >= 0,
        }
    }
}

impl std::fmt::Display for AType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let base = match &self.base {
            ABase::Known(b) => b.name().to_owned(),
            ABase::Var(v) => v.clone(),
        };
        let mut parts: Vec<String> = self
            .shape
            .vars
            .iter()
            .map(|(v, &c)| if c == 1 { v.clone() } else { format!("{c}{v}") })
            .collect();
        if self.shape.constant != 0 || parts.is_empty() {
            parts.push(self.shape.constant.to_string());
        }
        let shape =
            if parts.len() > 1 { format!("({})", parts.join("+")) } else { parts.join("+") };
        match self.form {
            AForm::Arr => write!(f, "[{base}]{shape}"),
            AForm::Vec => write!(f, "<{base}>{shape}"),
            AForm::S => write!(f, "S({base},{shape})"),
            AForm::SV => write!(f, "SV({base},{shape})"),
        }
    }
}

/// Whether an inferred type `ty` is a subtype of the annotation `a` under `b`
/// (binding its variables).
pub fn matches(a: &AType, ty: &Ty, b: &mut Bindings) -> bool {
    let base_ok = match &a.base {
        ABase::Known(k) => *k == ty.base(),
        ABase::Var(v) => *b.bases.entry(v.clone()).or_insert(ty.base()) == ty.base(),
    };
    if !base_ok {
        return false;
    }
    match a.form {
        AForm::Arr => ty.rank().is_some_and(|r| a.shape.unify(r as i64, b)),
        AForm::Vec => match ty.const_length() {
            Some(n) => a.shape.unify(n, b),
            // `<κ>γ` with γ unknown statically: only a shape variable of its own matches.
            None => false,
        },
        AForm::S | AForm::SV => {
            let form_ok = matches!((a.form, ty), (AForm::S, Ty::S(..)) | (AForm::SV, Ty::SV(..)));
            form_ok
                && ty.singleton().and_then(|v| v.as_constant()).is_some_and(|v| a.shape.unify(v, b))
        }
    }
}
