⍝ T25: overtake pads with the fill; a negative count takes from the end.
⎕ ← 5↑1 2 3
⎕ ← ¯2↑1 2 3
¯5↑1 2 3
⍝ ==
⍝ output { [0i64, 0i64, 1i64, 2i64, 3i64] }
