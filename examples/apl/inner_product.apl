⍝ T19 (Fig 3.5–3.8): an inner product through reshape, transp2, zipWith, reduce.
A ← 3 2⍴⍳5
B ← ⍉A
R ← A +.× B
⎕ ← R
×/ +/ R
⍝ ==
⍝ output { 65780i64 }
