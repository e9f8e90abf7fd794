⍝ T21 / benchmark Primes: outer-product residue, first-axis reduction, compress.
A ← 1↓⍳100
primes ← (1=+⌿0=A∘.|A)/A
+/primes
⍝ ==
⍝ output { 1060i64 }
