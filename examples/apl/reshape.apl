⍝ T24: reshape repeats its source cyclically; an empty source gives the fill 0.
⎕ ← 2⍴0↑1 2 3
2 3⍴1 2 3 4
⍝ ==
⍝ output { [[1i64, 2i64, 3i64], [4i64, 1i64, 2i64]] }
