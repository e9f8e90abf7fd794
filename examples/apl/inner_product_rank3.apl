⍝ Inner products whose right argument has rank 3: each result element sums over the
⍝ left argument's last axis and the right argument's first, and the right argument's
⍝ other axes follow the left's (a rank-3 right argument once came out permuted).
R ← (2 2⍴⍳4)+.×2 2 2⍴⍳8
S ← 1 10+.×2 3 4⍴⍳24
(,R),,S
⍝ ==
⍝ output { [11i64, 14i64, 17i64, 20i64, 23i64, 30i64, 37i64, 44i64, 131i64, 142i64, 153i64, 164i64, 175i64, 186i64, 197i64, 208i64, 219i64, 230i64, 241i64, 252i64] }
