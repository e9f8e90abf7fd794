⍝ Benchmark Game of Life (thesis Table 3.1: a 40×40 board, N = 20,000 generations;
⍝ Table 3.5: N = 2,000). A torus without nested arrays: the neighbour count is a
⍝ sum of rotations. The board starts with an R-pentomino; the value is the number of
⍝ live cells after N generations.
⍝ bench:
life ← {
  rows ← {(¯1⌽⍵)+⍵+1⌽⍵}
  n ← (rows ¯1⊖⍵)+(rows ⍵)+rows 1⊖⍵
  (n=3)∨(n=4)∧⍵
}
pentomino ← 3 3⍴0 1 1 1 1 0 0 1 0
board ← ⍉¯20↑⍉¯20↑pentomino
board ← 1=⍉40↑⍉40↑board
N ← 2000
+/+/ life⍣N ⊢ board
