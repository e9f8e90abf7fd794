#!/usr/bin/env python3
"""The table of bench/peers/run.sh's results: per program, Weft untuned and tuned (and
untuned through the bridge to the staged translator, in results from before it was
removed, session 13), each
peer's time (PyTorch eager, torch.compile, CuPy, hand-written CUDA), the best peer, and
the ratio best peer's time / Weft's time (above 1: Weft is faster; Weft's time is the
tuned one where there is one, else the untuned one). Then the geometric mean over the
apps and over the micro-operations, the performance issue's targets, and for saxpy,
sum, dot and reverse the fraction of the device-to-device copy bandwidth measured in
the same run (Weft's bytes, every input and output once, per second).

Usage: compare.py OUT_DIR
Reads OUT_DIR/{apps,programs}-{untuned,tuned,bridge}.jsonl (weft bench --json) and
OUT_DIR/peers.json (or, when a timeout cut it short, OUT_DIR/peers.jsonl).
"""
import json, math, os, sys

PEERS = ("eager", "compile", "cupy", "cuda")
BANDWIDTH = ("saxpy", "total", "dot_product", "flip")


def read_jsonl(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def weft_results(d, app_names):
    """{(untuned|tuned): {key: record}}; bench/programs' entries whose name an app has
    are keyed "programs/NAME" (as peers.py does)."""
    out = {"untuned": {}, "tuned": {}, "bridge": {}}
    for which in out:
        for part in ("apps", "programs"):
            for r in read_jsonl(os.path.join(d, f"{part}-{which}.jsonl")):
                if "entry" not in r:
                    continue
                key = r["entry"]
                if part == "programs" and key in app_names:
                    key = "programs/" + key
                out[which][key] = r
    return out


def weft_ms(r):
    if r and "total_kernel_ns" in r:
        return r["total_kernel_ns"]["median"] / 1e6
    return None


def read_peers(d):
    path = os.path.join(d, "peers.json")
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        pass
    out = {"times_ms": {}, "note": "peers.json missing or cut short: read from peers.jsonl"}
    for r in read_jsonl(os.path.join(d, "peers.jsonl")):
        if "copy" in r:
            out["copy"] = r["copy"]
            out["device"] = r.get("device")
        elif "entry" in r:
            out["times_ms"][r.pop("entry")] = r
    return out


def fmt(x):
    return f"{x:.3f}" if isinstance(x, (int, float)) else "-"


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main(d):
    peers = read_peers(d)
    times = peers.get("times_ms", {})
    app_names = {k for k, v in times.items() if str(v.get("file", "")).startswith("bench/apps/")}
    for part in ("untuned", "tuned"):
        for r in read_jsonl(os.path.join(d, f"apps-{part}.jsonl")):
            if "entry" in r:
                app_names.add(r["entry"])
    weft = weft_results(d, app_names)
    keys = list(dict.fromkeys(list(weft["untuned"]) + list(weft["tuned"]) + list(times)))
    apps = [k for k in keys if k in app_names]
    micro = [k for k in keys if k not in app_names]

    print(f"Device: {peers.get('device', '?')}; PyTorch {peers.get('torch', '?')}, CuPy {peers.get('cupy', '?')}; "
          f"peers run {peers.get('date', '?')}")
    if peers.get("note"):
        print(peers["note"])
    print("Times in ms (median kernel time for Weft, CUDA events for the peers); ratio = best peer / Weft.\n")
    errors, notes = [], []
    ratios, ratios_bridge = {}, {}
    # Results from before the bridge's removal (session 13) have a bridge column.
    has_bridge = bool(weft["bridge"])
    bridge_head = " Weft bridge |" if has_bridge else ""
    for title, group in (("Apps (bench/apps)", apps), ("Micro-operations (bench/programs)", micro)):
        print(f"### {title}\n")
        print(f"| program | Weft untuned | Weft tuned |{bridge_head} PyTorch eager | torch.compile | CuPy | CUDA | best peer | best peer / Weft |"
              + (" best peer / bridge |" if has_bridge else ""))
        print("|---|---:|---:|" + ("---:|" if has_bridge else "") + "---:|---:|---:|---:|---|---:|" + ("---:|" if has_bridge else ""))
        for k in group:
            un, tu = weft_ms(weft["untuned"].get(k)), weft_ms(weft["tuned"].get(k))
            bridge_ms = weft_ms(weft["bridge"].get(k))
            for which in ("untuned", "tuned", "bridge"):
                r = weft[which].get(k)
                if r and "error" in r:
                    errors.append(f"{k}: Weft {which}: {r['error'][:200]}")
            row = times.get(k, {})
            for p in PEERS:
                if f"{p}_error" in row:
                    errors.append(f"{k}: {p}: {row[p + '_error'][:200]}")
            if "compile_skipped" in row:
                notes.append(f"{k}: torch.compile skipped: {row['compile_skipped']}")
            got = {p: row[p] for p in PEERS if isinstance(row.get(p), (int, float))}
            best = min(got, key=got.get) if got else None
            ours = tu if tu is not None else un
            ratio = got[best] / ours if best and ours else None
            if ratio:
                ratios[k] = ratio
            ratio_bridge = got[best] / bridge_ms if best and bridge_ms else None
            if ratio_bridge:
                ratios_bridge[k] = ratio_bridge
            print(f"| {k} | {fmt(un)} | {fmt(tu)} | " + (f"{fmt(bridge_ms)} | " if has_bridge else "")
                  + " | ".join(fmt(row.get(p)) for p in PEERS)
                  + f" | {best or '-'} | {fmt(ratio)}{'x' if ratio else ''} |"
                  + (f" {fmt(ratio_bridge)}{'x' if ratio_bridge else ''} |" if has_bridge else ""))
        got = [ratios[k] for k in group if k in ratios]
        if got:
            g = geomean(got)
            low = min(got)
            print(f"\nGeometric mean {g:.3f}x over {len(got)} programs; the lowest {low:.3f}x "
                  f"({min((k for k in group if k in ratios), key=ratios.get)}).")
            if group is apps:
                below = [k for k in group if k in ratios and ratios[k] < 0.5]
                print(f"Targets (every app at least 0.5x, geometric mean at least 1.0x): "
                      f"{'met' if not below and g >= 1 else 'not met'}"
                      + (f"; below 0.5x: {', '.join(below)}" if below else "") + ".")
        got = [ratios_bridge[k] for k in group if k in ratios_bridge]
        if got:
            print(f"With --codegen bridge: geometric mean {geomean(got):.3f}x over {len(got)} programs.")
        print()

    copy = peers.get("copy", {})
    if "gb_per_s" in copy:
        print(f"### Fraction of copy bandwidth\n\nDevice-to-device copy (torch, {copy['bytes'] / 2**20:.0f} MiB read "
              f"and written): {copy['gb_per_s']:.1f} GB/s.\n")
        print("| program | Weft bytes | Weft time (ms) | Weft GB/s | fraction of copy | target 0.95 |")
        print("|---|---:|---:|---:|---:|---|")
        for k in BANDWIDTH:
            r = weft["tuned"].get(k) or weft["untuned"].get(k)
            ms = weft_ms(r)
            if not ms or not r.get("bytes"):
                print(f"| {k} | - | - | - | - | |")
                continue
            gbs = r["bytes"] / ms / 1e6
            frac = gbs / copy["gb_per_s"]
            print(f"| {k} | {r['bytes']} | {ms:.3f} | {gbs:.1f} | {frac:.3f} | {'met' if frac >= 0.95 else 'not met'} |")
        print()
    elif copy:
        errors.append(f"copy bandwidth: {copy.get('error')}")
    if notes:
        print("Notes:\n" + "\n".join("- " + n for n in notes) + "\n")
    if errors:
        print("Errors:\n" + "\n".join("- " + e for e in errors))


if __name__ == "__main__":
    main(sys.argv[1])
