⍝ Benchmark Easter (thesis Table 3.1: years 1–3000, repeated 300 times; Table 3.6
⍝ uses N = 10,000,000). Easter Sunday by the Meeus/Jones/Butcher algorithm, as
⍝ yyyymmdd, scalar-extended over a vector of years; the value is their sum.
⍝ bench:
easter ← {
  a ← 19|⍵
  b ← ⌊⍵÷100
  c ← 100|⍵
  h ← 30|(19×a)+b-(⌊b÷4)+(⌊(1+b-⌊(b+8)÷25)÷3)-15
  l ← 7|32+(2×4|b)+(2×⌊c÷4)-h+4|c
  m ← ⌊(a+(11×h)+22×l)÷451
  t ← h+l+114-7×m
  (10000×⍵)+(100×⌊t÷31)+1+31|t
}
⎕ ← easter 2014 2015 2016 2024
N ← 10000000
+/ easter ⍳N
