⍝ T29: indexed assignment (1-based).
A ← 2 2⍴⍳4
A[2;1] ← 9
A
⍝ ==
⍝ output { [[1i64, 2i64], [9i64, 4i64]] }
