⍝ Static LENGTH and RANK errors of scalar functions, in APL's terms.
a ← 1 2 3 + 4 5
b ← (2 2⍴⍳4) × 1 2
c ← {⍵ ⍵}¨ 1 2
