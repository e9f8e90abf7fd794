#!/usr/bin/env python3
"""Generates one big well-typed file of ordinary, mostly independent definitions, for
measuring `weft check` on big inputs (docs/cli.md, "Big files").

    python3 bench/check/gen_defs.py FILE [MEGABYTES]

Each group of blocks has a record type alias, a few documented size-polymorphic defs
(map/map2/reduce/scan, lambdas, let, if, indexing, records) that call one another
within the group and a def of an earlier group, and an entry with a test block. Unlike
bench/lsp/gen_big.py, whose defs form one call chain through the whole file (so
compiling its n-th entry inlines n defs), calls stay within a few groups, as in
ordinary programs.
"""
import sys


def group(i):
    earlier = f"scale{i - 1}" if i > 0 else "scale_base"
    return f"""type point{i} = {{x: f32, y: f32}}

-- | Scales and shifts (group {i}).
def scale{i} [n] (xs: [n]f32) (k: f32) : [n]f32 =
  map (\\x -> x * k + {i % 97}f32) xs

-- | A weighted sum of two arrays, through an earlier group's scaling.
def weighted{i} [n] (xs: [n]f32) (ys: [n]f32) : f32 =
  let zs = map2 (\\a b -> a * b - 0.5f32) ({earlier} xs 2f32) ys
  let s = reduce (+) 0f32 zs
  let m = if length xs > 0 then xs[0] else 0f32
  in if s > m then s else s * 2f32

-- | Running maxima and the norm of a point.
def running{i} [n] (xs: [n]i32) : [n]i32 = scan i32.max (-2147483648) xs

def norm{i} (p: point{i}) : f32 = f32.sqrt (p.x * p.x + p.y * p.y)

-- ==
-- input {{ [1f32, 2f32, 3f32] [4f32, 5f32, 6f32] }}
entry e{i} [n] (xs: [n]f32) (ys: [n]f32) : f32 =
  let ps = map2 (\\x y -> {{x = x, y = y}}) xs ys
  let far = reduce f32.max 0f32 (map norm{i} ps)
  in weighted{i} xs ys + far

"""


def main():
    out = sys.argv[1]
    megabytes = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    target = int(megabytes * 1_000_000)
    parts = ["def scale_base [n] (xs: [n]f32) (k: f32) : [n]f32 = map (\\x -> x * k) xs\n\n"]
    size = len(parts[0])
    i = 0
    while size < target:
        text = group(i)
        parts.append(text)
        size += len(text)
        i += 1
    with open(out, "w") as f:
        f.write("".join(parts))
    print(f"{out}: {size} bytes, {i} groups ({5 * i + 1} defs and aliases, {i} entries)")


if __name__ == "__main__":
    main()
