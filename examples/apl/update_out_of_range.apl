⍝ T29: every index is checked against its own axis: [1;3] of a 2×2 array is an error
⍝ (a flat-index check would accept it as element 3).
A ← 2 2⍴⍳4
A[1;3] ← 9
A
⍝ ==
⍝ error: out of bounds
