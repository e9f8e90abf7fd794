#!/usr/bin/env python3
"""Generates the language-server benchmark workspace: one file of about 20,000
lines (`big.weft`) plus a small imported `lib.weft`, all well-typed.

    python3 bench/lsp/gen_big.py DIR [LINES]

Each block is a documented, size-polymorphic def over map/reduce/let/if/lambdas
and indexing that calls the previous block's def and a def of lib.weft, and every
tenth block an entry with a test block. See docs/lsp.md for how it is measured.
"""
import os
import sys


def block(i):
    prev = f"f{i - 1} xs k" if i > 0 else "k"
    lines = [
        f"-- | Scales, shifts and sums its input (variant {i}).",
        f"def f{i} [n] (xs: [n]f32) (k: f32) : f32 =",
        f"  let ys = map (\\x -> x * k + {i % 97}f32) xs",
        "  let zs = map2 (\\a b -> a * b - helper a) ys xs",
        "  let s = reduce (+) 0f32 zs",
        "  let m = if length xs > 0 then xs[0] else 0f32",
        "  let t = if s > m then s else s * 2f32",
        f"  in t + {prev}",
        "",
    ]
    if i % 10 == 9:
        lines += [
            "-- ==",
            "-- input { [1f32, 2f32, 3f32] }",
            f"entry e{i} [n] (xs: [n]f32) : f32 = f{i} xs 2f32",
            "",
        ]
    return lines


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "target/lsp-bench"
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "lib.weft"), "w") as f:
        f.write("-- | A small helper imported by big.weft.\n"
                "def helper (x: f32) : f32 = x * 0.5f32 + 1f32\n")
    lines = ['import "lib"', ""]
    i = 0
    while len(lines) < target:
        lines += block(i)
        i += 1
    with open(os.path.join(out_dir, "big.weft"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out_dir}/big.weft: {len(lines)} lines, {i} defs")


if __name__ == "__main__":
    main()
