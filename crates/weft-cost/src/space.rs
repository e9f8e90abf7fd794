//! Space over time (digest 002, §3.7 with the pitfall-9 correction): the region events
//! of a graph replayed in schedule order, in bytes, per world; the peak of each world
//! with its witness; and the space-over-time plot as SVG.

use std::fmt::Write as _;

use crate::graph::{Graph, NodeId, Units, World};
use crate::schedule::Schedule;

/// Live bytes per world after the events at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpacePoint {
    pub time: u64,
    pub host: u64,
    pub device: u64,
}

/// A world's high-water mark and where it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peak {
    pub world: World,
    pub bytes: u64,
    pub time: u64,
    /// The node whose allocation reached the peak, and the region allocated.
    pub node: NodeId,
    pub region: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    pub points: Vec<SpacePoint>,
    pub host: Peak,
    pub device: Peak,
    /// The peak of host + device together.
    pub total: u64,
}

/// Replays `g`'s region events at the times `sched` reaches their nodes (ties in 1DF
/// order; within a node, in recording order).
pub fn timeline(g: &Graph, sched: &Schedule) -> Timeline {
    let mut order: Vec<NodeId> =
        (0..g.nodes.len() as NodeId).filter(|&v| !g.nodes[v as usize].events.is_empty()).collect();
    order.sort_by_key(|&v| (sched.node_time[v as usize], sched.df_order[v as usize]));
    let mut live = [0u64; 2];
    let mut peaks = [World::Host, World::Device].map(|world| Peak {
        world,
        bytes: 0,
        time: 0,
        node: 0,
        region: None,
    });
    let mut points = vec![SpacePoint { time: 0, host: 0, device: 0 }];
    let mut total = 0;
    for v in order {
        let time = sched.node_time[v as usize];
        for ev in &g.nodes[v as usize].events {
            let r = &g.regions[ev.region as usize];
            let w = match r.world {
                World::Host => 0,
                World::Device => 1,
            };
            if ev.alloc {
                live[w] += r.bytes;
                if live[w] > peaks[w].bytes {
                    peaks[w] = Peak {
                        world: r.world,
                        bytes: live[w],
                        time,
                        node: v,
                        region: Some(ev.region),
                    };
                }
            } else {
                live[w] = live[w].saturating_sub(r.bytes);
            }
            total = total.max(live[0] + live[1]);
        }
        let point = SpacePoint { time, host: live[0], device: live[1] };
        match points.last_mut() {
            Some(last) if last.time == time => *last = point,
            _ => points.push(point),
        }
    }
    let [host, device] = peaks;
    Timeline { points, host, device, total }
}

/// A readable byte count: `1234 B`, `12.3 KiB`, `4.5 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The space-over-time plot: one step line per world, labelled axes, peaks marked.
pub fn svg(t: &Timeline, makespan: u64, units: Units, title: &str) -> String {
    let (w, h) = (800.0_f64, 420.0_f64);
    let (left, right, top, bottom) = (90.0, 30.0, 50.0, 60.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let t_max = makespan.max(t.points.last().map_or(0, |p| p.time)).max(1) as f64;
    let y_max = t.host.bytes.max(t.device.bytes).max(1) as f64;
    let x = |time: u64| left + pw * (time as f64 / t_max);
    let y = |b: u64| top + ph * (1.0 - b as f64 / y_max);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    // Axes, ticks and labels.
    let (x0, y0) = (left, top + ph);
    let _ = writeln!(
        s,
        r#"<path d="M{x0} {top} L{x0} {y0} L{} {y0}" stroke="black" fill="none"/>"#,
        left + pw
    );
    for k in 0..=4u64 {
        let tv = (t_max * k as f64 / 4.0).round() as u64;
        let bv = (y_max * k as f64 / 4.0).round() as u64;
        let (tx, by) = (x(tv), y(bv));
        let _ = writeln!(
            s,
            r#"<line x1="{tx}" y1="{y0}" x2="{tx}" y2="{}" stroke="black"/>"#,
            y0 + 5.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{tx}" y="{}" text-anchor="middle">{}</text>"#,
            y0 + 18.0,
            escape(&units.show(tv))
        );
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{by}" x2="{x0}" y2="{by}" stroke="black"/>"#,
            x0 - 5.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            x0 - 8.0,
            by + 4.0,
            escape(&bytes(bv))
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">time ({}, greedy schedule)</text>"#,
        left + pw / 2.0,
        h - 15.0,
        units.axis()
    );
    let _ = writeln!(
        s,
        r#"<text x="20" y="{}" text-anchor="middle" transform="rotate(-90 20 {})">live bytes</text>"#,
        top + ph / 2.0,
        top + ph / 2.0
    );
    // One step line per world.
    for (world, colour, dy) in [(World::Host, "#1f77b4", 0.0), (World::Device, "#d62728", 16.0)] {
        let value = |p: &SpacePoint| match world {
            World::Host => p.host,
            World::Device => p.device,
        };
        let mut d = String::new();
        let mut prev: Option<u64> = None;
        for p in &t.points {
            let (px, py) = (x(p.time), y(value(p)));
            match prev {
                None => {
                    let _ = write!(d, "M{px:.1} {py:.1}");
                }
                Some(pb) => {
                    let _ = write!(d, " L{px:.1} {:.1} L{px:.1} {py:.1}", y(pb));
                }
            }
            prev = Some(value(p));
        }
        if let Some(pb) = prev {
            let _ = write!(d, " L{:.1} {:.1}", x(t_max as u64), y(pb));
        }
        let _ = writeln!(s, r#"<path d="{d}" stroke="{colour}" stroke-width="2" fill="none"/>"#);
        let peak = match world {
            World::Host => &t.host,
            World::Device => &t.device,
        };
        if peak.bytes > 0 {
            let (px, py) = (x(peak.time), y(peak.bytes));
            let _ = writeln!(s, r#"<circle cx="{px:.1}" cy="{py:.1}" r="4" fill="{colour}"/>"#);
        }
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{} (peak {})</text>"#,
            left + pw - 200.0,
            top + 10.0 + dy,
            left + pw - 180.0,
            top + 10.0 + dy,
            left + pw - 175.0,
            top + 14.0 + dy,
            world.name(),
            escape(&bytes(peak.bytes))
        );
    }
    s.push_str("</svg>\n");
    s
}
