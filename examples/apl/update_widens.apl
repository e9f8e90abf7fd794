⍝ Indexed assignment of a wider value widens the array, as in APL: a double stored
⍝ into integers makes the array doubles (it is not truncated).
W ← 3⍴0
W[2] ← 1.5
W
⍝ ==
⍝ output { [0f64, 1.5f64, 0f64] }
