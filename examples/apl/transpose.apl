⍝ T27: dyadic transpose moves axis k to position p[k]; a non-involutive permutation.
X ← 2 3 4⍴⍳24
⎕ ← ⍴2 1 3⍉X
Y ← 2 3 1⍉X
⎕ ← ⍴Y
Y[2;1;3]
⍝ ==
⍝ output { 10i64 }
