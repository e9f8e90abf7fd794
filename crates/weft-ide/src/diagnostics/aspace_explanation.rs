//! Address-space inference (`weft-aspace`, seed 000) as the explanation of the two
//! local-memory errors of type checking (`local-escapes-group`,
//! `to-local-outside-group`): their words are the inference's message and its chain of
//! reasons, so they read as the address-space errors of generated code do.

use weft_aspace::{Decl, Fact, Func, FuncKind, Program, Ptr, PtrId, Reason, Space, Target};
use weft_hir::Site;

/// A pointer of the chain: where, its name, and why it is there.
pub(super) struct Step {
    pub(super) site: Site,
    pub(super) name: String,
    pub(super) reason: String,
}

/// Runs address-space inference on the chain of a local array: a pointer declared
/// `local` at `steps[0]`, flowing through the other steps, into a slot at `sink` that
/// allows only `allowed`. Returns the inference's message and its chain of reasons,
/// each at its source site.
pub(super) fn explain(
    steps: &[Step],
    sink: (Site, String),
    allowed: weft_aspace::SpaceSet,
) -> (String, Vec<(Site, String)>) {
    let mut sites: Vec<Site> = steps.iter().map(|step| step.site.clone()).collect();
    sites.push(sink.0.clone());
    let reason = |i: usize, text: &str| Reason::new(text, Some(weft_aspace::Site(i as u32)));
    let mut ptrs = Vec::new();
    let mut facts = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let decl = if i == 0 { Decl::In(Space::Local) } else { Decl::Generic };
        ptrs.push(Ptr { name: step.name.clone(), decl, reason: reason(i, &step.reason) });
        if i > 0 {
            facts.push(Fact::Flow {
                from: PtrId(i as u32 - 1),
                to: PtrId(i as u32),
                reason: reason(i, &step.reason),
            });
        }
    }
    let last = PtrId(steps.len() as u32 - 1);
    facts.push(Fact::Bound { ptr: last, allowed, reason: reason(steps.len(), &sink.1) });
    let program = Program {
        funcs: vec![Func {
            name: "body".to_owned(),
            kind: FuncKind::Helper,
            params: Vec::new(),
            ret: None,
            ptrs,
            facts,
        }],
    };
    let inference = weft_aspace::infer(&program, Target::OpenCl12);
    let site_of = |r: &Reason| {
        r.site.and_then(|s| sites.get(s.0 as usize).cloned()).unwrap_or_else(|| sink.0.clone())
    };
    match inference.diagnostics().first() {
        Some(d) => {
            let mut chain: Vec<(Site, String)> = Vec::new();
            for r in &d.chain {
                let item = (site_of(r), r.text.clone());
                if !chain.contains(&item) {
                    chain.push(item);
                }
            }
            (d.message.clone(), chain)
        }
        // The engine accepts it only if the bound allows `local`: not for these callers.
        None => (sink.1.clone(), Vec::new()),
    }
}
