⍝ Syntax errors are reported statement by statement; the rest is still checked.
a ← (1 2
b ← 3 $ 4
c ← q + 1
d ← 1 2 3 ⋄ e ← d[1;2]
