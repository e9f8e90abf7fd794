⍝ A guard decided at run time (TAIL's `cond`): one Collatz step per element, iterated.
step ← {0=2|⍵: ⌊⍵÷2 ⋄ 1+3×⍵}
⎕ ← step¨ 6 7 8
+/ step¨⍣10 ⊢ 27 97 871
⍝ ==
⍝ output { 6961i64 }
