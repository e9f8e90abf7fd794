⍝ T23: ⍳ is 1-based; ⍳0 is empty.
⎕ ← ⍳0
⍳3
⍝ ==
⍝ output { [1i64, 2i64, 3i64] }
