⍝ T18: dot products reduce the last axis, at any rank.
dotpi ← {+/⍺×⍵}
⎕ ← 1 2 3 dotpi 4 5 6
(2 3⍴⍳6) dotpi 2 3⍴1 0 2
⍝ ==
⍝ output { [7i64, 16i64] }
