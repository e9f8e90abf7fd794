⍝ T26: rotate and drop, both directions.
⎕ ← 1⌽1 2 3
⎕ ← ¯1⌽1 2 3
⎕ ← 1↓1 2 3
(¯1↓1 2 3), (¯1⌽1 2 3)
⍝ ==
⍝ output { [1i64, 2i64, 3i64, 1i64, 2i64] }
